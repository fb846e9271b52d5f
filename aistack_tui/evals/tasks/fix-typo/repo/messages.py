WELCOME = 'Welcom to the app'
GOODBYE = 'See you soon'
