import messages

assert messages.WELCOME == 'Welcome to the app'
assert messages.GOODBYE == 'See you soon'
