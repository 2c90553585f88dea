"""The environment every test runs in (shared by the autouse safety net and wider-scoped fixtures)."""

import os

#: A fixed git identity and no user or system git config.
TEST_GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Owner",
    "GIT_AUTHOR_EMAIL": "owner@example.test",
    "GIT_COMMITTER_NAME": "Test Owner",
    "GIT_COMMITTER_EMAIL": "owner@example.test",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}
