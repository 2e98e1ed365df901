git status && git diff --stat HEAD~1 | tail -n 3
