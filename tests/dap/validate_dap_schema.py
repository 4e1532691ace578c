#!/usr/bin/env python3
"""Checks DAP messages against the official DAP JSON schema.

Usage: validate_dap_schema.py SCHEMA MESSAGES
MESSAGES is a JSON array of the messages an adapter sent. A response is checked against
<Command>Response (ErrorResponse when it failed; rewind's own rewind/* requests against the
generic Response), an event against <Event>Event (rewind's own rewind/* events against the
generic Event). Prints one line per invalid message and
exits 1 if there was any; prints how many were checked otherwise.
"""
import json
import sys

import jsonschema


def definition_for(msg, definitions):
    if msg.get("type") == "response":
        command = msg.get("command", "")
        if not msg.get("success", False):
            return "ErrorResponse"
        if command.startswith("rewind/"):
            return "Response"
        name = command[:1].upper() + command[1:] + "Response"
    elif msg.get("type") == "event":
        event = msg.get("event", "")
        if event.startswith("rewind/"):
            return "Event"
        name = event[:1].upper() + event[1:] + "Event"
    elif msg.get("type") == "request":  # a reverse request (runInTerminal)
        command = msg.get("command", "")
        name = command[:1].upper() + command[1:] + "Request"
    else:
        return None
    return name if name in definitions else None


def main():
    schema = json.load(open(sys.argv[1]))
    messages = json.load(open(sys.argv[2]))
    definitions = schema["definitions"]
    bad = 0
    for msg in messages:
        name = definition_for(msg, definitions)
        if name is None:
            print("no schema definition for message: " + json.dumps(msg)[:300])
            bad += 1
            continue
        sub = {"$ref": "#/definitions/" + name, "definitions": definitions}
        validator = jsonschema.Draft4Validator(sub)
        errors = sorted(validator.iter_errors(msg), key=lambda e: list(e.path))
        for e in errors[:3]:
            where = "/".join(str(p) for p in e.path)
            print(f"{name} invalid at '{where}': {e.message[:200]} in {json.dumps(msg)[:300]}")
        if errors:
            bad += 1
    if bad:
        print(f"{bad} of {len(messages)} messages do not match the DAP schema")
        return 1
    print(f"all {len(messages)} messages match the DAP schema")
    return 0


if __name__ == "__main__":
    sys.exit(main())
