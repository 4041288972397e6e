"""Pure-Python judgement of collected fabric/GPU evidence. Parsing lives in ``ccparse``."""
