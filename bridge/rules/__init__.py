"""The pure rules engine: no I/O, no clock, no global randomness.

Dice come in as an argument (:class:`bridge.rules.dice.DiceSource`); everything
else is plain data in, plain data out. Decisions produce events; applying the
events to a state is the only way the state changes, so replaying the log
reproduces the state exactly.
"""
