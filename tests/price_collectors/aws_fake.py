"""A fake AWS at the HTTP layer: real boto3 clients, answered by a botocore 'before-send'
handler with the wire formats AWS uses (EC2 query XML, Price List JSON).

Everything above the socket is botocore's own code: serialization, pagination, response
parsing, and the adaptive retry handler, which sees the injected throttling and 5xx
answers exactly as it would see AWS's. Used by the tests and by bench/bench_collect.py.
"""

from __future__ import annotations

import json
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs
from xml.sax.saxutils import escape

import boto3
from botocore.awsrequest import AWSResponse

EC2_NS = "http://ec2.amazonaws.com/doc/2016-11-15/"
SPOT_FIELDS = (("instanceType", "InstanceType"), ("productDescription", "ProductDescription"),
               ("spotPrice", "SpotPrice"), ("timestamp", "Timestamp"),
               ("availabilityZone", "AvailabilityZone"))


class _Raw:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self, **_kwargs):
        yield self.body


# fault(service, operation, region, attempt_key) -> None (answer normally) or (status, code)
Fault = Callable[[str, str, str, tuple], "tuple[int, str] | None"]


@dataclass
class FakeAws:
    """Spot history and price list products per region, served page by page."""

    spot: dict[str, list[dict]] = field(default_factory=dict)  # region -> SpotPriceHistory
    products: dict[str, list[dict]] = field(default_factory=dict)  # region -> PriceList items
    regions: list[str] | None = None  # DescribeRegions answer (default: keys of spot)
    latency: float = 0.0  # seconds per call
    fault: Fault | None = None
    calls: Counter = field(default_factory=Counter)  # (service, operation, region) -> calls
    faults: Counter = field(default_factory=Counter)  # (service, operation, region) -> faults
    requests: list[dict] = field(default_factory=list)  # parsed request parameters
    _lock: threading.Lock = field(default_factory=threading.Lock)
    # Rendered spot pages by request: AWS's own work, kept out of the client's CPU time
    # when a benchmark runs the same refresh again (the data never changes underneath).
    _spot_pages: dict = field(default_factory=dict)

    # --- wiring ---------------------------------------------------------------------

    def session(self) -> boto3.session.Session:
        from costsched.clouds.aws import new_session

        return new_session(aws_access_key_id="testing", aws_secret_access_key="testing",
                           region_name="us-east-1")

    def install(self, client) -> object:  # noqa: ANN001 - a boto3 client
        # unique_id: a client handed out twice (the shared Price List one) answers once.
        client.meta.events.register("before-send", self._answer,
                                    unique_id=f"fake-aws-{id(self)}")
        return client

    def clients(self, **config):
        """AwsClients whose clients are answered by this fake."""
        from costsched.clouds.aws import boto_config
        from price_collectors.aws import AwsClients

        fake = self

        class Clients(AwsClients):
            def ec2(self, region: str):
                return fake.install(super().ec2(region))

            def pricing(self, region: str):
                return fake.install(super().pricing(region))

        return Clients(session=self.session(), config=boto_config(**config))

    # --- answering ------------------------------------------------------------------

    def _answer(self, request, event_name: str, **_kwargs) -> AWSResponse:  # noqa: ANN001
        _, service, operation = event_name.split(".")
        body = request.body.decode() if isinstance(request.body, bytes) else request.body or ""
        if service == "ec2":
            params = {k: v[0] for k, v in parse_qs(body).items()}
            region = request.url.split("//", 1)[1].split(".")[1]
        else:
            params = json.loads(body or "{}")
            region = next((f["Value"] for f in params.get("Filters", [])
                           if f["Field"] == "regionCode"), "")
        key = (service, operation, region)
        with self._lock:
            self.calls[key] += 1
            attempt = self.calls[key]
            self.requests.append({"service": service, "operation": operation,
                                  "region": region, **params})
        if self.latency:
            time.sleep(self.latency)
        fault = self.fault(service, operation, region, (key, params.get("NextToken"), attempt)
                           ) if self.fault else None
        if fault:
            with self._lock:
                self.faults[key] += 1
            return _error(request.url, service, *fault)
        if service == "ec2" and operation == "DescribeRegions":
            return _xml(request.url, _regions_xml(self.regions or sorted(self.spot)))
        if service == "ec2" and operation == "DescribeSpotPriceHistory":
            page_key = (region, body)
            if page_key not in self._spot_pages:
                items = self.spot.get(region, [])
                wanted = {v for k, v in params.items() if k.startswith("InstanceType.")}
                items = [i for i in items if not wanted or i["InstanceType"] in wanted]
                page, token = _page(items, params.get("NextToken"),
                                    int(params.get("MaxResults", 1000)))
                self._spot_pages[page_key] = _spot_xml(page, token)
            return _xml(request.url, self._spot_pages[page_key])
        if service == "pricing" and operation == "GetProducts":
            page, token = _page(self.products.get(region, []), params.get("NextToken"),
                                int(params.get("MaxResults", 100)))
            answer = {"FormatVersion": "aws_v1", "PriceList": [json.dumps(p) for p in page]}
            if token:
                answer["NextToken"] = token
            return AWSResponse(request.url, 200, {"Content-Type": "application/x-amz-json-1.1"},
                               _Raw(json.dumps(answer).encode()))
        raise AssertionError(f"fake AWS does not answer {service} {operation}")


def _page(items: list, token: str | None, size: int) -> tuple[list, str]:
    start = int(token.split("-")[1]) if token else 0
    end = start + size
    return items[start:end], (f"page-{end}" if end < len(items) else "")


def _xml(url: str, body: str) -> AWSResponse:
    return AWSResponse(url, 200, {"Content-Type": "text/xml;charset=UTF-8"},
                       _Raw(body.encode()))


def _spot_xml(items: list[dict], token: str) -> str:
    rows = "".join(
        "<item>" + "".join(f"<{tag}>{escape(str(item[name]))}</{tag}>"
                           for tag, name in SPOT_FIELDS) + "</item>"
        for item in items
    )
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<DescribeSpotPriceHistoryResponse '
            f'xmlns="{EC2_NS}"><requestId>fake</requestId><spotPriceHistorySet>{rows}'
            f"</spotPriceHistorySet><nextToken>{token}</nextToken>"
            "</DescribeSpotPriceHistoryResponse>")


def _regions_xml(regions: list[str]) -> str:
    rows = "".join(f"<item><regionName>{r}</regionName><regionEndpoint>ec2.{r}.amazonaws.com"
                   "</regionEndpoint><optInStatus>opt-in-not-required</optInStatus></item>"
                   for r in regions)
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<DescribeRegionsResponse xmlns="{EC2_NS}">'
            f"<requestId>fake</requestId><regionInfo>{rows}</regionInfo>"
            "</DescribeRegionsResponse>")


def _error(url: str, service: str, status: int, code: str) -> AWSResponse:
    if service == "ec2":
        body = (f"<Response><Errors><Error><Code>{code}</Code><Message>injected {code}"
                "</Message></Error></Errors><RequestID>fake</RequestID></Response>")
        return AWSResponse(url, status, {"Content-Type": "text/xml"}, _Raw(body.encode()))
    body = json.dumps({"__type": code, "message": f"injected {code}"})
    return AWSResponse(url, status, {"Content-Type": "application/x-amz-json-1.1"},
                       _Raw(body.encode()))


def flaky(fraction: float, seed: int = 7) -> Fault:
    """Fail about `fraction` of first attempts with a throttle or a 5xx (retries succeed).

    Which calls fail depends only on the call (operation, region, page token), not on
    thread timing, so a test sees the same faults on every run.
    """
    kinds = [(503, "RequestLimitExceeded"), (400, "ThrottlingException"),
             (500, "InternalError"), (503, "ServiceUnavailable")]
    seen: set = set()
    lock = threading.Lock()

    def fault(service: str, operation: str, region: str, attempt_key: tuple):
        key, token, _attempt = attempt_key
        with lock:
            first = (key, token) not in seen
            seen.add((key, token))
        if not first:
            return None  # the retry succeeds
        draw = zlib.crc32(f"{seed}|{operation}|{region}|{token}".encode())
        if draw % 1000 >= fraction * 1000:
            return None
        status, code = kinds[draw % len(kinds)]
        if service == "pricing":  # the Price List API's own names for these
            code = {"RequestLimitExceeded": "ThrottlingException",
                    "InternalError": "InternalErrorException"}.get(code, code)
        return status, code

    return fault


def always_failing(region: str) -> Fault:
    """Every EC2 call in `region` answers 503 Unavailable, however often it is retried."""

    def fault(service: str, operation: str, r: str, attempt_key: tuple):
        return (503, "Unavailable") if service == "ec2" and r == region else None

    return fault
