"""Wire messages between the Foundry module and the bridge.

The pydantic models here are the single source of the JSON Schemas in
``schemas/`` (``make schemas``): ``base`` holds the shared types, ``intents``
what clients send (each intent declared once, on its model: :class:`Intent`),
``views`` what the bridge answers and emits. Every public name of the three is a
name of this package, so a new model needs no line here.
"""

from bridge.service.protocol.base import *  # noqa: F403
from bridge.service.protocol.intents import *  # noqa: F403
from bridge.service.protocol.views import *  # noqa: F403
