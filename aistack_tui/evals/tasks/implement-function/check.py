from text import slugify

assert slugify('Hello, World!') == 'hello-world'
assert slugify('  many   spaces ') == 'many-spaces'
assert slugify('a_b') == 'a-b'
