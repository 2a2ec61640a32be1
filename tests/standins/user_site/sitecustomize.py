"""A user's own sitecustomize: the payload must chain to it."""

import os

os.environ["USER_SITECUSTOMIZE_RAN"] = "yes"
