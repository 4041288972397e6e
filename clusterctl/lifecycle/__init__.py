"""Node lifecycle without a human in the loop (issue 25): health check -> drain -> remediate ->
re-verify -> resume, quarantine, burn-in.

- :mod:`.core`: the decision table, pure (states, remedies from the severity table, share limit,
  window, two passes);
- :mod:`.store`: the state folder (records, the JSON-lines action log, the lock);
- :mod:`.flow`: one run of the loop against Slurm and the nodes (``clusterctl remediate``), and the
  node listing (``clusterctl nodes``).
"""
