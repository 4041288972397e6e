"""Parsers for fabric, GPU and Slurm tool outputs.

This package lives once, in the collection's ``plugins/module_utils``: Ansible modules import it by FQCN
(``ansible_collections.clusterctl.hpc.plugins.module_utils.ccparse.<module>``, packed into the module
payload for the host); the clusterctl package imports it as ``ccparse`` from the same folder (a ``.pth``
entry of the editable install or of the wheel puts that folder on ``sys.path``). Imports inside the
package are relative, so both names load the same files.
Every parser is a pure function ``text -> normalised dict`` registered under a KIND name with
:func:`ccparse.common.parser`. Units are normalised: rates in Gb/s, bandwidth in GB/s, sizes in
bytes, temperatures in C.
"""
