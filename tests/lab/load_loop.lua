-- Broken on purpose (tests/e2e/lab.sh): loops at load time, before any hook exists.
while true do end
