"""Fixtures for driving the official ACI Python SDK against a running Patchbay.

The Node test tier (test/e2e/aci-sdk/aci-python-sdk.e2e-spec.ts) starts the service, a local upstream
and the catalogue rows, then runs pytest with PATCHBAY_SDK_FIXTURES naming them; each pytest result is
reported back through PATCHBAY_SDK_RESULTS (a JSON file) and becomes one test of that tier.
"""

import json
import os

import pytest
from aci import ACI


@pytest.fixture(scope="session")
def fx() -> dict:
    with open(os.environ["PATCHBAY_SDK_FIXTURES"], encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="session")
def client(fx: dict) -> ACI:
    return ACI(api_key=fx["api_key"], base_url=f"{fx['url']}/v1")


@pytest.fixture(scope="session")
def other_client(fx: dict) -> ACI:
    """Another project's key: it sees none of the first project's configurations or accounts."""
    return ACI(api_key=fx["other_api_key"], base_url=f"{fx['url']}/v1")


_results: list[dict] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" or report.outcome != "passed":
        _results.append(
            {
                "nodeid": report.nodeid,
                "when": report.when,
                "outcome": report.outcome,
                "longrepr": str(report.longrepr) if report.longrepr else None,
            }
        )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = os.environ.get("PATCHBAY_SDK_RESULTS")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(_results, f)
