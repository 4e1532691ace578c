#!/usr/bin/env bash
# A program talking to a TCP server on 127.0.0.1 replays with the server stopped.
. "$(dirname "$0")/lib.sh"
need python3
cat >"$WORK/server.py" <<'PY'
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(1)
print(s.getsockname()[1], flush=True)
s.settimeout(30)
c, _ = s.accept()
data = c.recv(100)
c.sendall(b"hello " + data + b" at " + str(time.time()).encode() + b"\n")
c.close()
PY
python3 "$WORK/server.py" >"$WORK/port" &
server=$!
for _ in $(seq 50); do [ -s "$WORK/port" ] && break; sleep 0.1; done
port=$(cat "$WORK/port")
[ -n "$port" ] || { kill $server; fail "server did not start"; finish; }
record_and_replay client python3 -c "
import socket
c = socket.create_connection(('127.0.0.1', $port))
c.sendall(b'client')
print(c.recv(200).decode().strip())
"
wait $server
grep -q "hello client at" "$WORK/client.rec.out" || fail "client did not talk to the server: $(cat "$WORK/client.rec.out")"
# The server is gone: replay once more to be sure nothing reaches the network.
if python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), timeout=1)" 2>/dev/null; then
  fail "something still listens on port $port"
fi
"$REWIND" replay -a "$TRACE" >"$WORK/again.out" 2>&1 && cmp -s "$WORK/again.out" "$WORK/client.rec.out" \
  && pass "replay with the server stopped: $(cat "$WORK/again.out")" || fail "replay without the server failed"
finish
