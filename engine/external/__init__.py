"""External engines: a 2048 engine in any language, spoken to over its standard input and output
in tune2048's engine protocol (docs/engine-protocol.md), and the checks it must pass."""

from engine.external.process import EngineFailure, EngineProcess
from engine.external.protocol import VERSION, Declaration, GameResult, Param, ProtocolError, Search

__all__ = ["VERSION", "Declaration", "EngineFailure", "EngineProcess", "GameResult", "Param",
           "ProtocolError", "Search"]
