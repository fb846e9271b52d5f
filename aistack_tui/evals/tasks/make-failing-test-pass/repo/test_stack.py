from stack import Stack

s = Stack()
s.push(1)
s.push(2)
assert s.pop() == 2, 'pop must return the last item pushed'
assert s.pop() == 1
print('ok')
