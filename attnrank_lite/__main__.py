import sys

from .site.cli import main

sys.exit(main())
