"""A family with more parameters than a run's config.yaml may write out, for the bad-input corpus
(tests/data/bad/config-family-too-many-params.yaml).

Named as ``tests.data.families.wide:TooWide``: misbehaving.py's ``Empty``, with 300 more
parameters of 4,000-character names that its heuristic never reads. Each is written into the
run's config.yaml, which would be over 1 MiB, more than a config is read back.
"""

from engine.families import Param
from tests.data.families.misbehaving import Empty


class TooWide(Empty):
    params = Empty.params + tuple(Param("w" + str(i).zfill(3_999), 1.0, 0.5, 2.0, "never read")
                                  for i in range(300))
