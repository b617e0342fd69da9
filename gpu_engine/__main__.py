import sys

from gpu_engine.cli import main

sys.exit(main())
