"""Wire messages between the Foundry module and the bridge.

The pydantic models here are the single source of the JSON Schemas in
``schemas/`` (``make schemas``): ``base`` holds the shared types, ``intents``
what clients send (each intent declared once, on its model: :class:`Intent`);
what the bridge sends: ``card_views`` (an action's card), ``scene_views`` (zoomed-in
play and the scene panel), ``frames`` (acks, emits, notices), ``answers`` (each intent's
answer data). Every public name of them is a name of this package, so a new model
needs no line here.
"""

from bridge.service.protocol.answers import *  # noqa: F403
from bridge.service.protocol.base import *  # noqa: F403
from bridge.service.protocol.card_views import *  # noqa: F403
from bridge.service.protocol.frames import *  # noqa: F403
from bridge.service.protocol.inbound import *  # noqa: F403
from bridge.service.protocol.intents import *  # noqa: F403
from bridge.service.protocol.scene_views import *  # noqa: F403
