"""Club mode: many boards on an MQTT broker, one club server running every table's
game (server.py), storing every event and action (store.py), a live page of all
tables (web.py), and the broker's configuration for the event (broker.py)."""
