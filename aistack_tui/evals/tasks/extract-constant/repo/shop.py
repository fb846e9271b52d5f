def tax(amount):
    return amount * 0.2


def total(amount):
    return amount + amount * 0.2
