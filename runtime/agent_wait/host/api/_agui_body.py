"""The short body of `POST /agui/resume`, `{"resume": [ResumeEntry, ...]}`, as a model of `ag-ui-protocol`'s shapes.

Its own module so that `agent_wait.host.api._agui` imports `ag-ui-protocol` and pydantic only when a route needs them
(the answer API's cold start never does).
"""

from __future__ import annotations

from ag_ui.core import ResumeEntry
from pydantic import BaseModel

__all__ = ("ResumeBody",)


class ResumeBody(BaseModel):
    """The short body: the resume entries alone."""

    resume: list[ResumeEntry]
