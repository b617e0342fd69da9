/* Smart Cart: small progressive enhancements. Every page works without this file. */
(function () {
  "use strict";

  // Forms marked data-once: disable the submit button while the request is in flight,
  // so a double click does not add a product twice.
  function guardDoubleSubmit(root) {
    root.querySelectorAll("form[data-once]").forEach(function (form) {
      form.addEventListener("submit", function (event) {
        if (form.dataset.submitting === "1") {
          event.preventDefault();
          return;
        }
        form.dataset.submitting = "1";
        form.setAttribute("aria-busy", "true");
        var button = event.submitter || form.querySelector("button[type=submit]");
        if (button) {
          // Disabling synchronously would drop the button's own name/value from the post.
          window.setTimeout(function () { button.disabled = true; }, 0);
        }
      });
    });
  }

  // An error the server rendered after a refused form: bring it into view and focus.
  function focusAutofocusTarget() {
    var target = document.querySelector("[data-autofocus]");
    if (target) {
      target.focus({ preventScroll: false });
    }
  }

  // Improve cart: while a run is queued or running, the panel carries data-poll-url.
  // Fetch the panel's fresh HTML until the run finishes; the region around it is
  // aria-live, so screen readers hear the result. Without JS a <noscript> refresh does it.
  var POLL_FIRST_MS = 400;
  var POLL_MAX_MS = 2500;
  var POLL_GIVE_UP_MS = 5 * 60 * 1000;
  var POLLS_PAST_DEADLINE = 4;

  function pollImprove() {
    var region = document.getElementById("improve-region");
    if (!region) {
      return;
    }
    var started = Date.now();
    var delay = POLL_FIRST_MS;
    var pollsPastDeadline = 0;

    function panelUrl() {
      var panel = region.querySelector("[data-poll-url]");
      return panel ? panel.getAttribute("data-poll-url") : null;
    }

    function pastDeadline() {
      // The run's own deadline (data-poll-deadline, epoch ms): a poll after it has the server
      // recover a run whose worker died, or fail one no worker started and say why. A few
      // polls allow for this clock running ahead of the server's; then give up.
      var panel = region.querySelector("[data-poll-deadline]");
      var deadline = panel ? Number(panel.getAttribute("data-poll-deadline")) : 0;
      if (!deadline || Date.now() <= deadline) {
        pollsPastDeadline = 0;
        return false;
      }
      pollsPastDeadline += 1;
      return pollsPastDeadline > POLLS_PAST_DEADLINE;
    }

    function giveUp() {
      var offer = region.querySelector("[data-poll-timeout]");
      var note = region.querySelector("[data-poll-note]");
      if (offer) {
        offer.hidden = false;
        if (note) {
          note.hidden = true;
        }
      }
      var panel = region.querySelector("[aria-busy]");
      if (panel) {
        panel.removeAttribute("aria-busy");
      }
      // No spinner or moving bar for a run the page no longer waits for.
      region.querySelectorAll(".progress, .spinner").forEach(function (node) {
        node.hidden = true;
      });
      var title = region.querySelector("#improve-title");
      if (title) {
        title.textContent = "We couldn’t improve your cart in time";
      }
      finished(region.contains(document.activeElement));
    }

    function tick() {
      var url = panelUrl();
      if (!url) {
        return;
      }
      if (pastDeadline()) {
        giveUp();
        return;
      }
      if (Date.now() - started > POLL_GIVE_UP_MS) {
        var note = region.querySelector("[data-poll-note]");
        if (note) {
          note.textContent = "This is taking unusually long. Reload the page to check again.";
        }
        return;
      }
      fetch(url, { headers: { Accept: "text/html", "X-Requested-With": "fetch" }, credentials: "same-origin" })
        .then(function (response) {
          if (!response.ok) {
            throw new Error("status " + response.status);
          }
          return response.text();
        })
        .then(function (html) {
          var hadFocus = region.contains(document.activeElement);
          region.innerHTML = html;
          guardDoubleSubmit(region);
          if (!panelUrl()) {
            finished(hadFocus);
            return;
          }
          delay = Math.min(delay * 1.5, POLL_MAX_MS);
          window.setTimeout(tick, delay);
        })
        .catch(function () {
          // A dropped connection is not a failed run: back off and try again.
          delay = POLL_MAX_MS;
          window.setTimeout(tick, delay);
        });
    }

    function finished(hadFocus) {
      // The Improve cart button waited for this run; it may start another one now.
      var button = document.querySelector("[data-improve-button]");
      if (button) {
        button.disabled = false;
        button.removeAttribute("aria-disabled");
        var label = button.querySelector("[data-improve-label]");
        if (label) {
          label.textContent = "Improve cart";
        }
      }
      var panel = region.querySelector(".improve-panel");
      if (panel && hadFocus) {
        panel.focus();
      }
    }

    if (panelUrl()) {
      window.setTimeout(tick, delay);
    }
  }

  // Add to cart without leaving the page: the form posts as it would, the page it leads to
  // (with its "Added …" note) is fetched, and its note, the header's cart badge and, on the
  // same page, the main content (offers ranked for the cart as it is now) replace this
  // page's. The notes region is aria-live, so screen readers hear the change; focus stays on
  // the button pressed. A refused add (a 4xx page with the form's errors) is posted again
  // the ordinary way, so the shopper sees that page as without scripts (nothing was added);
  // no answer at all is not sent again (the add may have happened).
  function isAddToCart(form) {
    return form.method.toLowerCase() === "post" &&
      /\/cart\/add\/?$/.test(new URL(form.action, window.location.href).pathname);
  }

  function sameButton(root, form, button) {
    var offer = form.querySelector("input[name=offer]");
    var product = form.querySelector("input[name=product]");
    var label = button ? button.textContent.trim() : "";
    var found = null;
    root.querySelectorAll("form").forEach(function (candidate) {
      if (found || !isAddToCart(candidate)) {
        return;
      }
      var o = candidate.querySelector("input[name=offer]");
      var p = candidate.querySelector("input[name=product]");
      if ((o ? o.value : "") !== (offer ? offer.value : "") ||
          (p ? p.value : "") !== (product ? product.value : "")) {
        return;
      }
      candidate.querySelectorAll("button[type=submit], button:not([type])").forEach(function (b) {
        if (!found && b.textContent.trim() === label) {
          found = b;
        }
      });
    });
    return found;
  }

  // The note at the top of the page may be a screen away (a phone, a long offer list): a
  // short one sits beside the form pressed too. Not a live region: the notes region speaks.
  function noteBesideForm(form, freshNotes) {
    document.querySelectorAll("[data-added-note]").forEach(function (old) { old.remove(); });
    var toast = freshNotes && freshNotes.querySelector(".toast--success");
    if (!form || !form.isConnected || !toast) {
      return;
    }
    var count = /\((\d+) in your cart now\)/.exec(toast.textContent);
    var cart = document.querySelector("a.cart-link");
    var note = document.createElement("p");
    note.className = "hint hint--shipping small";
    note.setAttribute("data-added-note", "");
    note.textContent = count ? "In your cart: " + count[1] + " now. " : "In your cart now. ";
    if (cart) {
      var link = document.createElement("a");
      link.href = cart.pathname;
      link.textContent = "View cart";
      note.appendChild(link);
    }
    if (window.getComputedStyle(form.parentElement).display === "grid") {
      note.style.gridColumn = "1 / -1";  // a row of its own under a grid row (an offer)
    }
    form.insertAdjacentElement("afterend", note);
    note.scrollIntoView({ block: "nearest" });  // a few pixels at most: the page stays put
  }

  function addWithoutReload(event) {
    var form = event.target;
    if (event.defaultPrevented || !(form instanceof HTMLFormElement) || !isAddToCart(form) ||
        !window.fetch || !window.DOMParser) {
      return;
    }
    event.preventDefault();
    var button = event.submitter || form.querySelector("button[type=submit]");
    var data = new FormData(form);
    if (button && button.name) {
      data.append(button.name, button.value);
    }
    var focusWasOnForm = !document.activeElement || document.activeElement === document.body ||
      form.contains(document.activeElement);

    function settle() {
      delete form.dataset.submitting;
      form.removeAttribute("aria-busy");
      if (button) {
        window.setTimeout(function () { button.disabled = false; }, 0);
      }
    }

    var refused = false;
    fetch(form.action, {
      method: "POST",
      body: data,
      credentials: "same-origin",
      headers: { Accept: "text/html", "X-Requested-With": "fetch" }
    })
      .then(function (response) {
        if (!response.ok) {
          refused = true;
          throw new Error("status " + response.status);
        }
        return response.text().then(function (html) {
          return { url: response.url, doc: new DOMParser().parseFromString(html, "text/html") };
        });
      })
      .then(function (page) {
        var target = new URL(page.url, window.location.href);
        var here = window.location;
        var main = document.getElementById("main");
        var freshMain = page.doc.getElementById("main");
        var focusTarget = button;
        if (main && freshMain && target.pathname === here.pathname && target.search === here.search) {
          main.replaceChildren.apply(main, Array.prototype.map.call(freshMain.childNodes, function (node) {
            return document.importNode(node, true);
          }));
          guardDoubleSubmit(main);
          focusTarget = sameButton(main, form, button);
        } else {
          settle();
        }
        var badge = document.querySelector("[data-testid=cart-units]");
        var freshBadge = page.doc.querySelector("[data-testid=cart-units]");
        if (badge && freshBadge) {
          badge.className = freshBadge.className;
          badge.innerHTML = freshBadge.innerHTML;
        }
        var notes = document.querySelector(".messages[aria-live]");
        var freshNotes = page.doc.querySelector(".messages[aria-live]");
        if (notes && freshNotes) {
          notes.innerHTML = freshNotes.innerHTML;
        }
        noteBesideForm(focusTarget ? focusTarget.form : form, freshNotes);
        if (focusWasOnForm && focusTarget) {
          focusTarget.focus({ preventScroll: true });
        }
      })
      .catch(function () {
        settle();
        if (refused) {
          form.submit();
          return;
        }
        // No answer: the add may or may not have happened, so it is not sent again.
        var notes = document.querySelector(".messages[aria-live]");
        if (notes) {
          notes.innerHTML = '<p class="toast toast--error">The shop could not be reached. ' +
            'Check your cart before adding again.</p>';
        }
      });
  }

  document.addEventListener("submit", addWithoutReload);

  // The facets start open (they work without scripts); on a phone they fold away so that the
  // results come first (the summary says how many are chosen).
  function foldFacets() {
    var facets = document.querySelector("[data-facets]");
    if (!facets || !window.matchMedia("(max-width: 1000px)").matches) {
      return;
    }
    facets.open = false;
  }

  document.addEventListener("DOMContentLoaded", function () {
    foldFacets();
    guardDoubleSubmit(document);
    focusAutofocusTarget();
    pollImprove();
  });
})();
