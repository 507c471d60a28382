"""Parses a metrics text with PyPI's prometheus-client, the reference parser of the
Prometheus text format and of OpenMetrics, and prints what it understood as JSON, for
tests/metrics_endpoint.rs to check.

    python3 parse_metrics.py prometheus|openmetrics < scrape.txt

Prints {"families": [{"name", "type", "unit", "samples": [{"name", "labels",
"value"}]}]}; a text the parser refuses exits 1 with its reason on stderr.
"""

import json
import math
import sys

from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families as prometheus_families


def number(value):
    # JSON has no infinities or NaN; the tests name them as strings.
    if math.isinf(value) or math.isnan(value):
        return str(value)
    return value


def main():
    parsers = {"prometheus": prometheus_families, "openmetrics": openmetrics_families}
    if len(sys.argv) != 2 or sys.argv[1] not in parsers:
        sys.exit("usage: parse_metrics.py prometheus|openmetrics < text")
    text = sys.stdin.read()
    try:
        families = [
            {
                "name": family.name,
                "type": family.type,
                "unit": family.unit,
                "samples": [
                    {"name": s.name, "labels": s.labels, "value": number(s.value)}
                    for s in family.samples
                ],
            }
            for family in parsers[sys.argv[1]](text)
        ]
    except Exception as error:  # the parser's refusal, whatever its class
        sys.exit(f"the {sys.argv[1]} parser refused the text: {error!r}")
    json.dump({"families": families}, sys.stdout)


main()
