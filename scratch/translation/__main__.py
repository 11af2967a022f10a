"""`python -m scratch.translation <pair data options> --output-dir DIR [...]`: trains a translation model."""

import logging

from scratch.translation.train import main

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    main()
