import pathlib

import shop

assert shop.TAX_RATE == 0.2
assert shop.tax(100) == 20
assert shop.total(100) == 120
assert pathlib.Path('shop.py').read_text().count('0.2') == 1
