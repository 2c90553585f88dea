"""`brain eval`: compile benchmark conversations into Brains with Dream and measure the packets.

Lives under dream/ because it compiles; `brain eval` imports it lazily (the one place brain/ may).
"""

from dream.eval.harness import EvalReport, render_markdown, run_eval

__all__ = ["EvalReport", "render_markdown", "run_eval"]
