"""The HiGHS solver process: runs one cart's program at a time for its parent, so that a crash
inside HiGHS (a SIGSEGV on a numerically hard program) ends this process, never the caller's.

Run as a script (``python path/to/highs_child.py``), not as a module of the package: it needs
only the standard library, NumPy and highspy, and starts in ~0.1 s. The parent side is
:mod:`gpu_engine.solvers.milp.highs_process`.

Protocol, both ways: frames of an 8-byte little-endian length and a pickle. The parent sends
``{"kind": "solve", "id", "program", "options", "bounds", "start", "relaxed", "time_limit"}`` or
``{"kind": "cancel", "id"}``; this process answers each solve with a :func:`_reply` dict. The
main thread reads requests; HiGHS runs on a worker thread (it releases the GIL), so a cancel is
read and trips ``cancelSolve`` while HiGHS runs. End of input (the parent exited or closed the
pipe) ends this process at once, even mid-solve.
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
import threading
from typing import IO, Any

_HEADER = struct.Struct("<Q")


def send(stream: IO[bytes], message: Any) -> None:
    """Write one frame and flush it."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def receive(stream: IO[bytes]) -> Any:
    """Read one frame; EOFError when the other side has gone."""
    header = _read_exactly(stream, _HEADER.size)
    return pickle.loads(_read_exactly(stream, _HEADER.unpack(header)[0]))


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise EOFError("the other side closed the pipe")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class _Job:
    """One request's HiGHS instance and whether it was cancelled (a cancel can come before HiGHS
    is set up: the run then never starts)."""

    def __init__(self, job_id: int) -> None:
        self.id = job_id
        self.highs: Any = None
        self.cancelled = False
        self.lock = threading.Lock()

    def attach(self, highs) -> bool:
        """Hold ``highs`` for a cancel; False when the job is cancelled already."""
        with self.lock:
            self.highs = highs
            return not self.cancelled

    def cancel(self) -> None:
        with self.lock:
            self.cancelled = True
            if self.highs is not None:
                self.highs.cancelSolve()


def solve(request: dict[str, Any], job: _Job) -> dict[str, Any]:
    """Run one request's program in HiGHS, unless ``job`` is cancelled before HiGHS starts."""
    import highspy
    import numpy as np

    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    for name, value in request["options"].items():
        highs.setOptionValue(name, value)
    if request["time_limit"] is not None:
        highs.setOptionValue("time_limit", float(request["time_limit"]))
    # Registers the interrupt callbacks (simplex, IPM, MIP) that ``cancelSolve`` trips.
    highs.HandleUserInterrupt = True
    _pass_program(highs, request["program"], relaxed=request["relaxed"])
    bounds = request["bounds"]
    if bounds is not None and bounds[0].size:
        highs.changeColsBounds(int(bounds[0].size), *bounds)
    start = request["start"]
    if start is not None:
        highs.setSolution(start.size, np.arange(start.size, dtype=np.int32), start)
    if job.attach(highs):
        highs.run()
    return _reply(highs, request)


def _pass_program(highs, program: dict[str, Any], *, relaxed: bool) -> None:
    import highspy
    import numpy as np

    integer = np.zeros_like(program["integer"]) if relaxed else program["integer"]
    status = highs.passModel(
        int(program["cost"].size),
        int(program["row_lower"].size),
        int(program["index"].size),
        int(highspy.MatrixFormat.kRowwise),
        int(highspy.ObjSense.kMinimize),
        0.0,
        program["cost"],
        program["lower"],
        program["upper"],
        program["row_lower"],
        program["row_upper"],
        program["starts"][:-1],
        program["index"],
        program["value"],
        integer,
    )
    if status == highspy.HighsStatus.kError:
        raise ValueError("HiGHS refused the cart's program")


def _reply(highs, request: dict[str, Any]) -> dict[str, Any]:
    import highspy
    import numpy as np

    info = highs.getInfo()
    model_status = highs.getModelStatus()
    feasible = info.primal_solution_status == 2  # HiGHS: "a feasible point is known"
    values = None
    if feasible or request["relaxed"]:
        values = np.asarray(highs.getSolution().col_value, dtype=np.float64)
    return {
        "id": request["id"],
        "status": highs.modelStatusToString(model_status),
        "optimal": model_status == highspy.HighsModelStatus.kOptimal,
        "feasible": feasible,
        "objective": float(info.objective_function_value),
        "dual_bound": float(info.mip_dual_bound),
        "values": values,
    }


class _Server:
    """The main loop: requests in, replies out, one HiGHS run at a time."""

    def __init__(self, requests: IO[bytes], replies: IO[bytes]) -> None:
        self.requests, self.replies = requests, replies
        self.lock = threading.Lock()  # guards ``current`` and the replies stream
        self.current: _Job | None = None

    def serve(self) -> None:
        while True:
            try:
                request = receive(self.requests)
            except EOFError:
                os._exit(0)  # the parent is gone: nobody wants the answer
            if request["kind"] == "cancel":
                with self.lock:
                    if self.current is not None and self.current.id == request["id"]:
                        self.current.cancel()
            else:
                job = _Job(request["id"])
                with self.lock:
                    self.current = job
                threading.Thread(target=self._run, args=(request, job), daemon=True).start()

    def _run(self, request: dict[str, Any], job: _Job) -> None:
        try:
            reply = solve(request, job)
        except Exception as exc:  # HiGHS's own errors travel back as a failed run
            reply = {"id": request["id"], "error": f"{type(exc).__name__}: {exc}"}
        with self.lock:
            self.current = None
            send(self.replies, reply)


def main() -> None:
    # HiGHS's C++ code may print to file descriptor 1: the replies get a private copy of it, and
    # descriptor 1 becomes stderr, so that no stray output corrupts a frame.
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    _Server(sys.stdin.buffer, replies).serve()


if __name__ == "__main__":
    main()
