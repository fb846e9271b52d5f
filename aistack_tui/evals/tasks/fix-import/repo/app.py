from helper import double

print(double(2))
