from pages import page_count

assert page_count(10, 5) == 2
assert page_count(11, 5) == 3
assert page_count(0, 5) == 0
assert page_count(1, 5) == 1
