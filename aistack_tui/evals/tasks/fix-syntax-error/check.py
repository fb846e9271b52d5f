import calc

assert calc.add(2, 3) == 5
assert calc.sub(5, 3) == 2
