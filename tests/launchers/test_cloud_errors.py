"""The SDKs' own exceptions told apart (`launchers.cloud_errors`): what each kind of failure
becomes (transient, denied, refused; the offerings it refuses too; whether the request may
have been carried out), in one line naming the cloud, the call, the cause and the fix, never
a secret. Through the launchers: EC2 through botocore's Stubber and its send hook, Compute
Engine through its fake client, Azure through the loopback Resource Manager."""

from __future__ import annotations

from pathlib import Path

import pytest
from botocore.exceptions import (
    ClientError,
    EndpointConnectionError,
    NoCredentialsError,
    ReadTimeoutError,
)
from botocore.stub import Stubber

from costsched.migration.launcher import CloudError
from launchers.cloud_errors import cloud_error

google = pytest.importorskip("google.api_core.exceptions")
azure_errors = pytest.importorskip("azure.core.exceptions")

EC2 = "https://ec2.us-east-1.amazonaws.com/"
SIGNED = "https://x.blob.core.windows.net/c/b?sv=2024&sig=Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Njc4OQ"


def client_error(code: str, status: int, message: str = "said by EC2",
                 operation: str = "RunInstances") -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": message},
                        "ResponseMetadata": {"HTTPStatusCode": status}}, operation)


def told(cloud: str, exc: BaseException, call: str = "us-east-1a: launch p3.2xlarge"
         ) -> CloudError:
    found = cloud_error(cloud, call, exc)
    assert found is not None
    assert "\n" not in str(found) and "Traceback" not in str(found)
    return found


@pytest.mark.parametrize(("exc", "kind", "scope", "sent"), [
    (EndpointConnectionError(endpoint_url=EC2), "transient", "region", False),
    (ReadTimeoutError(endpoint_url=EC2), "transient", "offering", True),
    (client_error("RequestLimitExceeded", 503), "transient", "region", False),
    (client_error("ThrottlingException", 400), "transient", "region", False),
    (client_error("InternalError", 500), "transient", "offering", True),
    (client_error("UnauthorizedOperation", 403), "denied", "cloud", False),
    (client_error("AccessDenied", 403, operation="SendCommand"), "denied", "cloud", False),
    (client_error("ExpiredToken", 400), "denied", "cloud", False),
    (NoCredentialsError(), "denied", "cloud", False),
    (client_error("InvalidAMIID.NotFound", 400), "refused", "offering", False),
], ids=["unreachable", "read-timeout", "request-limit", "throttling", "500", "unauthorized",
        "access-denied", "expired-token", "no-credentials", "other-answer"])
def test_botocores_failures(exc: BaseException, kind: str, scope: str, sent: bool) -> None:
    found = told("aws", exc)
    assert (found.kind, found.scope, found.sent) == (kind, scope, sent)
    assert str(found).startswith("aws us-east-1a: launch p3.2xlarge")


def test_the_lines_name_the_call_the_cause_and_the_fix() -> None:
    assert str(told("aws", EndpointConnectionError(endpoint_url=EC2), "list of the job's "
                    "instances")) == (
        "aws list of the job's instances: cannot reach the cloud's API "
        "(EndpointConnectionError: Could not connect to the endpoint URL: "
        "\"https://ec2.us-east-1.amazonaws.com/\"); check this machine's network (a proxy, "
        "DNS, a firewall) to the cloud's API")
    assert str(told("aws", client_error("UnauthorizedOperation", 403, "You are not "
                                        "authorized to perform this operation."))) == (
        "aws us-east-1a: launch p3.2xlarge (RunInstances): not allowed "
        "(UnauthorizedOperation: You are not authorized to perform this operation.); allow "
        "it to the AWS identity costsched uses (its IAM policy); `costsched check` says "
        "what each cloud can do from here")
    assert str(told("aws", client_error("ExpiredToken", 400, "The security token included "
                                        "in the request is expired"))).endswith(
        "renew the AWS credentials (`aws sso login`, `aws configure`, or new keys in "
        "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY); `costsched check` says what each cloud "
        "can do from here")


@pytest.mark.parametrize(("exc", "kind", "scope", "sent", "fix"), [
    (google.ServiceUnavailable("The service is currently unavailable"), "transient",
     "offering", True, ""),
    (google.InternalServerError("internal error"), "transient", "offering", True, ""),
    (google.TooManyRequests("Rate Limit Exceeded"), "transient", "cloud", False, ""),
    (google.PermissionDenied("Required 'compute.instances.create' permission for "
                             "'projects/p/zones/us-central1-a/instances/x'"), "denied",
     "cloud", False, "grant the permission it names"),
    (google.Unauthenticated("Request had invalid authentication credentials"), "denied",
     "cloud", False, "gcloud auth application-default login"),
    (TimeoutError(), "transient", "offering", True, "check this machine's network"),
    (google.BadRequest("Invalid value for field 'resource.machineType'"), "refused",
     "offering", False, ""),
], ids=["503", "500", "429", "permission", "login", "operation-timeout", "other-answer"])
def test_the_google_clients_failures(exc: BaseException, kind: str, scope: str, sent: bool,
                                     fix: str) -> None:
    found = told("gcp", exc, "us-central1-a: insert a2-highgpu-1g")
    assert (found.kind, found.scope, found.sent) == (kind, scope, sent)
    assert fix in found.fix


def test_the_google_auth_and_http_failures() -> None:
    from google.auth.exceptions import RefreshError, TransportError
    from requests.exceptions import ConnectionError as RequestsConnectionError
    from requests.exceptions import ReadTimeout

    assert (told("gcp", RefreshError("invalid_grant: Token has been expired or revoked"))
            .kind) == "denied"
    gone = told("gcp", TransportError("Failed to retrieve http://metadata/token"))
    assert (gone.kind, gone.sent) == ("transient", False)
    refused = told("gcp", RequestsConnectionError("HTTPSConnectionPool: Max retries exceeded "
                                                  "(NewConnectionError: Connection refused)"))
    assert (refused.kind, refused.sent, refused.scope) == ("transient", False, "cloud")
    assert told("gcp", ReadTimeout("Read timed out. (read timeout=60)")).sent


@pytest.mark.parametrize(("exc", "kind", "scope", "sent"), [
    (azure_errors.ServiceRequestError("Failed to establish a new connection"), "transient",
     "cloud", False),
    (azure_errors.ServiceResponseError("Connection aborted"), "transient", "offering", True),
    (azure_errors.ClientAuthenticationError("DefaultAzureCredential failed to retrieve a "
                                            "token"), "denied", "cloud", False),
], ids=["request-not-sent", "answer-lost", "no-token"])
def test_azure_cores_failures(exc: BaseException, kind: str, scope: str, sent: bool) -> None:
    found = told("azure", exc, "eastus: launch Standard_NC6s_v3")
    assert (found.kind, found.scope, found.sent) == (kind, scope, sent)


def test_a_secret_in_a_failure_is_never_said() -> None:
    found = told("azure", azure_errors.ServiceResponseError(f"Connection aborted for {SIGNED}"))
    assert "Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Njc4OQ" not in str(found)
    assert "sig=***" in str(found)
    aws = told("aws", client_error("AuthFailure", 401, "AWS was not able to validate the "
                                   "credentials: token=abcdefabcdef0123456789"))
    assert "abcdefabcdef0123456789" not in str(aws) and aws.kind == "denied"


def test_an_error_of_costsched_itself_is_left_as_it_is() -> None:
    assert cloud_error("aws", "launch", KeyError("ImageId")) is None
    assert cloud_error("gcp", "launch", ValueError("bad")) is None


# --- through the launchers -------------------------------------------------------------------


@pytest.fixture()
def ec2_launcher(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # noqa: ANN201
    from tests.conftest import hermetic_aws_env

    hermetic_aws_env(monkeypatch, tmp_path)
    monkeypatch.setattr("costsched.clouds.aws.RETRIES",
                        {"mode": "standard", "total_max_attempts": 1})
    from launchers.aws import AwsLauncher

    return AwsLauncher(image_id="ami-12c6146b")


def test_ec2s_answers_and_a_lost_network_through_the_launcher(ec2_launcher) -> None:  # noqa: ANN001
    from tests.launchers.test_aws import spec

    ec2 = ec2_launcher._client("ec2", "us-east-1")
    with Stubber(ec2) as stub:
        for code, status in (("RequestLimitExceeded", 503), ("UnauthorizedOperation", 403),
                             ("InternalError", 500)):
            stub.add_response("describe_instances", {"Reservations": []})
            stub.add_client_error("run_instances", service_error_code=code,
                                  service_message=f"{code}\nsaid", http_status_code=status)
        kinds = []
        for _ in range(3):
            with pytest.raises(CloudError) as caught:
                ec2_launcher.launch(spec())
            kinds.append((caught.value.kind, caught.value.sent))
            assert str(caught.value).startswith("aws us-east-1b: run_instances p3.2xlarge: ")
        stub.assert_no_pending_responses()
    assert kinds == [("transient", False), ("denied", False), ("transient", True)]

    def unplugged(request, **_: object) -> None:  # noqa: ANN001 - botocore's send hook
        raise EndpointConnectionError(endpoint_url=request.url)

    ec2.meta.events.register_first("before-send.ec2", unplugged)
    with pytest.raises(CloudError) as caught:
        ec2_launcher.launch(spec())
    assert caught.value.kind == "transient" and not caught.value.sent
    assert "EndpointConnectionError" in str(caught.value)


def test_compute_engines_answers_through_the_launcher() -> None:
    from launchers.gcp import GcpLauncher
    from tests.launchers.test_gcp import FakeInstances, spec

    fake = FakeInstances()
    launcher = GcpLauncher(project="proj", instances_client=fake)
    fake.fail_insert = google.ServiceUnavailable("backend unavailable")
    with pytest.raises(CloudError) as caught:
        launcher.launch(spec())
    assert (caught.value.kind, caught.value.sent) == ("transient", True)
    assert str(caught.value).startswith("gcp us-central1-a: insert n1-standard-8+1xnvidia-"
                                        "tesla-v100: the cloud's API failed (ServiceUnavailable")
    fake.fail_insert = google.PermissionDenied("Required 'compute.instances.create' "
                                               "permission for 'projects/proj'")
    with pytest.raises(CloudError) as caught:
        launcher.launch(spec(attempt="second"))
    assert caught.value.kind == "denied" and "compute.instances.create" in str(caught.value)

    def unreachable(**_: object) -> None:
        from requests.exceptions import ConnectionError as RequestsConnectionError

        raise RequestsConnectionError("Max retries exceeded (Connection refused)")

    fake.get = unreachable  # type: ignore[method-assign]
    with pytest.raises(CloudError) as caught:
        launcher.status("us-central1-a/costsched-7-0123456789ab")
    assert str(caught.value).startswith("gcp us-central1-a: status: cannot reach the "
                                        "cloud's API (ConnectionError: ")


def test_resource_managers_answers_through_the_launcher(azure, tmp_path: Path) -> None:  # noqa: ANN001
    from costsched.clouds.azure_sdk import AzureClients
    from costsched.config import AzureConfig
    from launchers.azure import AzureLauncher
    from launchers.azure_vm import vm_name
    from tests.launchers.azure_fake import SUBSCRIPTION, StaticToken
    from tests.launchers.test_azure import IDENTITY, KEY, spec

    key = tmp_path / "key.pub"
    key.write_text(KEY)
    clients = AzureClients(SUBSCRIPTION, StaticToken(), endpoint=azure.url, poll_seconds=0.01,
                           retry_total=0)
    launcher = AzureLauncher(clients=clients, settings=AzureConfig(
        ssh_public_key=str(key), identity=IDENTITY))
    azure.arm.refuse[vm_name(7, "move-1-0")] = (429, "TooManyRequests",
                                                "The request is being throttled.")
    with pytest.raises(CloudError) as caught:
        launcher.launch(spec())
    assert (caught.value.kind, caught.value.scope) == ("transient", "cloud")
    assert str(caught.value) == ("azure eastus: create Standard_NC6s_v3: throttled by the "
                                 "cloud's API (TooManyRequests: The request is being "
                                 "throttled.)")
    azure.arm.refuse[vm_name(7, "move-2-0")] = (
        403, "AuthorizationFailed", "The client 'x' does not have authorization to perform "
        "action 'Microsoft.Compute/virtualMachines/write'")
    with pytest.raises(CloudError) as caught:
        launcher.launch(spec(attempt="move-2-0"))
    assert caught.value.kind == "denied"
    assert "Microsoft.Compute/virtualMachines/write" in str(caught.value)
    assert str(caught.value).endswith("assign the identity costsched uses a role that allows "
                                      "it (Virtual Machine Contributor on the resource "
                                      "group); `costsched check` says what each cloud can do "
                                      "from here")
