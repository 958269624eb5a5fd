"""Example cases (YAML stances) shipped with argnb.dialectic."""
