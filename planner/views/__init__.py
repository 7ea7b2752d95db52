"""Pages of the planner: the wizard, saved plans, results, comparisons and exports."""
