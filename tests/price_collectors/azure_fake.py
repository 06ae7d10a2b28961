"""A loopback Azure Retail Prices API that filters, pages and fails like the real one."""

from __future__ import annotations

import json
import re
import threading
from urllib.parse import parse_qs, quote, urlsplit

from tests.price_collectors.conftest import FIXTURES

PAGE_SIZE = 2
PATH = "/api/retail/prices"


class RetailPrices:
    """Answers GET /api/retail/prices?$filter=... from the fixture items, PAGE_SIZE a page."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.items = json.loads((FIXTURES / "azure_retail_prices.json").read_text())["Items"]
        self.filters: list[str] = []
        self.fail = lambda odata_filter, skip, first: None  # -> (status, headers) or None
        self._seen: set = set()
        self._lock = threading.Lock()

    def __call__(self, request) -> tuple[int, dict[str, str], bytes]:
        url = urlsplit(request.path)
        if url.path != PATH:
            return 404, {}, b"{}"
        query = parse_qs(url.query)
        odata = query.get("$filter", [""])[0]
        skip = int(query.get("$skip", ["0"])[0])
        with self._lock:
            first = (odata, skip) not in self._seen
            self._seen.add((odata, skip))
            self.filters.append(odata)
        failure = self.fail(odata, skip, first)
        if failure:
            status, headers = failure
            return status, headers, b'{"Error": "injected"}'
        matching = [i for i in self.items if _matches(i, odata)]
        page = matching[skip:skip + PAGE_SIZE]
        more = skip + PAGE_SIZE < len(matching)
        body = {"BillingCurrency": "USD", "CustomerEntityId": "Default",
                "CustomerEntityType": "Retail", "Items": page, "Count": len(page),
                "NextPageLink": (f"{self.base_url}{PATH}?$filter={quote(odata)}"
                                 f"&$skip={skip + PAGE_SIZE}") if more else None}
        return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()


def _matches(item: dict, odata: str) -> bool:
    """The subset of OData the collector uses: eq terms, and-ed, with one or-group."""
    skus = set(re.findall(r"armSkuName eq '([^']+)'", odata))
    regions = set(re.findall(r"armRegionName eq '([^']+)'", odata))
    services = set(re.findall(r"serviceName eq '([^']+)'", odata))
    types = set(re.findall(r"priceType eq '([^']+)'", odata))
    return ((not skus or item["armSkuName"] in skus)
            and (not regions or item["armRegionName"] in regions)
            and (not services or item["serviceName"] in services)
            and (not types or item["type"] in types))
