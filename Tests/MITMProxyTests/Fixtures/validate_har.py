"""Validates a HAR file against the HAR 1.2 schema in this folder; prints a JSON summary of the entries."""
import json
import pathlib
import sys

import jsonschema

schema = json.loads((pathlib.Path(__file__).parent / "har-1.2.schema.json").read_text())
har = json.loads(pathlib.Path(sys.argv[1]).read_text())
jsonschema.Draft7Validator(schema).validate(har)
log = har["log"]
print(json.dumps({
    "entries": [
        {
            "method": e["request"]["method"],
            "url": e["request"]["url"],
            "status": e["response"]["status"],
            "size": e["response"]["content"]["size"],
            "textLength": len(e["response"]["content"].get("text", "")),
            "encoding": e["response"]["content"].get("encoding"),
            "truncated": e["response"]["content"].get("_truncated", False),
            "connection": e.get("connection"),
            "postLength": len(e["request"].get("postData", {}).get("text", "")),
            "trailers": e["response"].get("_trailers"),
            "error": e["response"].get("_error"),
        }
        for e in log["entries"]
    ],
    "tlsErrors": log.get("_tlsErrors", []),
}))
