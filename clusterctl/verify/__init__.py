"""``clusterctl verify`` as a library: collect -> analyse -> act.

- :mod:`.collect`: check the arguments and the inventory (:func:`plan`, nothing runs yet), then run
  ``playbooks/verify.yml``, which captures evidence on the nodes into a fresh folder (:func:`collect`).
- :mod:`.analyse`: judge the folder (at ``--level full`` after the pairwise ib_write_bw/nccl-tests
  rounds), write the JSON and HTML reports (:func:`analyse`); judge a folder already captured
  (:func:`judge_folder`, ``clusterctl analyze``).
- :mod:`.act`: drain the failed nodes in Slurm (:func:`drain`); the quick verify a rollout runs on a
  batch after its change (:func:`quick_verify`).

The functions return results and raise :mod:`clusterctl.errors` types (and
:class:`clusterctl.inventory.InventoryError`); they print nothing. ``clusterctl.commands.verify_cmd``
prints them and chooses the exit status.
"""

from __future__ import annotations

from clusterctl.verify.act import drain, quick_verify, resume
from clusterctl.verify.analyse import Verification, analyse, judge_folder
from clusterctl.verify.collect import LEVELS, Collection, VerifyPlan, collect, plan

__all__ = ["LEVELS", "Collection", "Verification", "VerifyPlan", "analyse", "collect", "drain", "judge_folder",
           "plan", "quick_verify", "resume"]
