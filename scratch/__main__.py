"""`python -m scratch <data options> --output-dir DIR [...]`: trains the from-scratch Transformer."""

import logging

from scratch.train import main

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    main()
