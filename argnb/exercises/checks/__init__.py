"""The exercise graders, one module per teaching module: ``argnb.exercises.checks.<module>``.

They import the teaching modules, never the other way round (so "check" in a teaching module
means one thing: the agent's rule check). Every grader runs without a model.
"""
