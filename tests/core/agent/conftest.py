from __future__ import annotations

import pytest
from agent_fakes import ScriptedModel


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel()
