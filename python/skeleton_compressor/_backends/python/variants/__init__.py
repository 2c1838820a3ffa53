"""Variant sets for the value strategies: the multiple-choice relaxation's bound (`bound`) and
the `optimal` strategy's set over them (`optimal`)."""
