"""The Tune tab: race session settings with a live leaderboard."""
