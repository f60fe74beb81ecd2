"""Tool-using agents: one episode's loop (episode.py), its tools and their policy
(tools.py), compaction of the history (compaction.py), and the transcript Self-Reflection
reads (transcript.py). The strategies `react` and `react+reflexion`
(harness/strategies/) compose them with the core's steps."""
from harness.agent.episode import OPTIONS, EpisodeEnd, EpisodeSettings, run_episode, unanswered
from harness.agent.tools import DEFAULT_TOOLS, TOOLS, ToolPolicy

__all__ = ["OPTIONS", "EpisodeEnd", "EpisodeSettings", "run_episode", "unanswered", "DEFAULT_TOOLS", "TOOLS",
           "ToolPolicy"]
