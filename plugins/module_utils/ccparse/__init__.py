"""Parsers for fabric, GPU and Slurm tool outputs.

This package lives in ``plugins/module_utils`` so Ansible modules import it as
``ansible.module_utils.ccparse.<module>``; the clusterctl package imports it as ``ccparse``.
Every parser is a pure function ``text -> normalised dict`` registered under a KIND name with
:func:`ccparse.common.parser`. Units are normalised: rates in Gb/s, bandwidth in GB/s, sizes in
bytes, temperatures in C.
"""
