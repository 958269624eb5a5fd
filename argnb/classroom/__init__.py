"""A class on one server: the model behind a JupyterHub service that knows each learner.

* :mod:`argnb.classroom.gateway` -- the service: an OpenAI-compatible endpoint that identifies
  each learner by the hub token their server already has, forwards to the class's model server
  (whose key only the gateway holds), meters usage and enforces limits with a fair queue;
* :mod:`argnb.classroom.usage` -- what was used, per learner and lesson (SQLAlchemy: SQLite by
  default, Postgres for a larger hub);
* :mod:`argnb.classroom.fairqueue` -- who goes next when the model server is busy;
* :mod:`argnb.classroom.hub` -- ``configure(c, ...)`` for ``jupyterhub_config.py``;
* :mod:`argnb.classroom.views` -- the instructor's page.

A learner's side lives in :mod:`argnb.llm.classserver` (the class settings the hub hands every
server, and the allowance left). docs/deploy.md walks an instructor through it.
"""
