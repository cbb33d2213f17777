"""The official ACI Python SDK, unchanged, against Patchbay: every resource method, the meta functions
through handle_function_call, and the SDK's error classes."""

import uuid

import pytest
from aci import ACI
from aci._exceptions import AuthenticationError, NotFoundError, PermissionError, ValidationError
from aci.meta_functions import ACIExecuteFunction, ACISearchFunctions
from aci.types.app_configurations import AppConfiguration
from aci.types.apps import AppBasic, AppDetails
from aci.types.enums import FunctionDefinitionFormat, SecurityScheme
from aci.types.functions import FunctionExecutionResult
from aci.types.linked_accounts import LinkedAccount, LinkedAccountWithCredentials

ALL_FORMATS = list(FunctionDefinitionFormat)


def owner() -> str:
    return f"sdk-user-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="session")
def configured(client: ACI, fx: dict) -> dict:
    """The project's configurations, made through the SDK: api_key, no_auth and oauth2 apps."""
    made = {}
    for app, scheme in (
        (fx["api_app"], SecurityScheme.API_KEY),
        (fx["noauth_app"], SecurityScheme.NO_AUTH),
        (fx["oauth_app"], SecurityScheme.OAUTH2),
    ):
        made[app] = client.app_configurations.create(app_name=app, security_scheme=scheme)
    return made


@pytest.fixture(scope="session")
def api_owner(client: ACI, fx: dict, configured: dict) -> str:
    """An owner with a linked API-key account for the api_key app."""
    who = owner()
    client.linked_accounts.link(
        app_name=fx["api_app"],
        linked_account_owner_id=who,
        security_scheme=SecurityScheme.API_KEY,
        api_key=fx["upstream_key"],
    )
    return who


def item_arguments(item_id: str = "42", q: str = "hello world") -> dict:
    return {"path": {"item_id": item_id}, "query": {"q": q}}


# ---------------------------------------------------------------- apps


def test_apps_search_returns_app_basics_by_category(client: ACI, fx: dict) -> None:
    apps = client.apps.search(categories=[fx["category"]], limit=50)

    assert all(isinstance(app, AppBasic) for app in apps)
    assert sorted(app.name for app in apps) == sorted(fx["category_apps"])
    assert all(app.functions is None for app in apps)


def test_apps_search_ranks_by_intent(client: ACI, fx: dict) -> None:
    apps = client.apps.search(intent="store and fetch inventory items", categories=[fx["category"]], limit=3)

    assert apps[0].name == fx["api_app"]


def test_apps_search_allowed_apps_only_and_include_functions(client: ACI, fx: dict, configured: dict) -> None:
    allowed = client.apps.search(categories=[fx["category"]], allowed_apps_only=True, include_functions=True)

    assert sorted(app.name for app in allowed) == sorted([fx["api_app"], fx["noauth_app"], fx["oauth_app"]])
    api = next(app for app in allowed if app.name == fx["api_app"])
    assert sorted(fn.name for fn in api.functions) == sorted([fx["get_item"], fx["create_item"]])
    assert all(fn.description for fn in api.functions)


def test_apps_get_returns_app_details(client: ACI, fx: dict) -> None:
    details = client.apps.get(app_name=fx["api_app"])

    assert isinstance(details, AppDetails)
    assert details.name == fx["api_app"]
    assert details.security_schemes == ["api_key"]
    assert uuid.UUID(details.id)
    assert sorted(fn.name for fn in details.functions) == sorted([fx["get_item"], fx["create_item"]])
    get_item = next(fn for fn in details.functions if fn.name == fx["get_item"])
    assert get_item.protocol == "rest"
    assert get_item.protocol_data["method"] == "GET"
    assert "path" in get_item.parameters["properties"]


def test_apps_get_oauth2_app_shows_no_client_secret(client: ACI, fx: dict) -> None:
    response = client.httpx_client.get(f"apps/{fx['oauth_app']}")
    details = client.apps.get(app_name=fx["oauth_app"])

    assert details.security_schemes == ["oauth2"]
    assert fx["oauth_client_secret"] not in response.text
    assert fx["oauth_client_id"] not in response.text


def test_apps_get_unknown_app_raises_not_found(client: ACI) -> None:
    with pytest.raises(NotFoundError):
        client.apps.get(app_name="NO_SUCH_APP_ANYWHERE")


# ---------------------------------------------------------------- functions


@pytest.mark.parametrize("fmt", ALL_FORMATS, ids=[f.value for f in ALL_FORMATS])
def test_functions_get_definition_in_every_format(client: ACI, fx: dict, fmt: FunctionDefinitionFormat) -> None:
    definition = client.functions.get_definition(function_name=fx["get_item"], format=fmt)

    if fmt == FunctionDefinitionFormat.BASIC:
        assert definition == {"name": fx["get_item"], "description": fx["get_item_description"]}
        return
    if fmt == FunctionDefinitionFormat.OPENAI:
        assert definition["type"] == "function"
        body = definition["function"]
        schema = body["parameters"]
    elif fmt == FunctionDefinitionFormat.OPENAI_RESPONSES:
        assert definition["type"] == "function"
        body = definition
        schema = definition["parameters"]
    else:
        body = definition
        schema = definition["input_schema"]
    assert body["name"] == fx["get_item"]
    assert body["description"] == fx["get_item_description"]
    # Only the visible parameters: the hidden Accept header is not shown to the model.
    assert sorted(schema["properties"]) == ["path", "query"]
    assert "visible" not in str(schema)


@pytest.mark.parametrize("fmt", ALL_FORMATS, ids=[f.value for f in ALL_FORMATS])
def test_functions_search_in_every_format(client: ACI, fx: dict, fmt: FunctionDefinitionFormat) -> None:
    results = client.functions.search(app_names=[fx["api_app"]], format=fmt)

    assert sorted(_name(result) for result in results) == sorted([fx["get_item"], fx["create_item"]])
    # Each result is exactly what the definition endpoint gives in that format.
    for result in results:
        assert result == client.functions.get_definition(function_name=_name(result), format=fmt)


def _name(result: dict) -> str:
    return result["function"]["name"] if "function" in result else result["name"]


def test_functions_search_by_intent_and_allowed_only(client: ACI, fx: dict, configured: dict) -> None:
    everything = client.functions.search(intent="create a new item", app_names=fx["category_apps"])
    allowed = client.functions.search(intent="create a new item", app_names=fx["category_apps"], allowed_only=True)
    deprecated = client.functions.search(app_names=fx["category_apps"], allowed_apps_only=True)

    assert fx["create_item"] in [_name(result) for result in everything[:2]]
    names = {_name(result) for result in allowed}
    assert fx["create_item"] in names
    assert fx["unconfigured_function"] not in names
    assert fx["unconfigured_function"] in {_name(result) for result in everything}
    assert {_name(result) for result in deprecated} == {_name(result) for result in client.functions.search(
        app_names=fx["category_apps"], allowed_only=True
    )}


def test_functions_execute_sends_the_exact_request(client: ACI, fx: dict, api_owner: str) -> None:
    result = client.functions.execute(
        function_name=fx["get_item"], function_arguments=item_arguments(), linked_account_owner_id=api_owner
    )

    assert isinstance(result, FunctionExecutionResult)
    assert result.success is True, result.error
    seen = result.data
    assert seen["method"] == "GET"
    assert seen["path"] == "/items/42"
    assert seen["query"] == {"q": "hello world"}
    assert seen["headers"]["x-echo-key"] == f"Token {fx['upstream_key']}"
    assert seen["headers"]["accept"] == "application/json"


def test_functions_execute_with_a_json_body(client: ACI, fx: dict, api_owner: str) -> None:
    result = client.functions.execute(
        function_name=fx["create_item"],
        function_arguments={"body": {"title": "A new item"}},
        linked_account_owner_id=api_owner,
    )

    assert result.success is True, result.error
    assert result.data["method"] == "POST"
    assert result.data["json"] == {"title": "A new item", "source": "sdk"}


def test_functions_execute_unknown_owner_raises_not_found(client: ACI, fx: dict, configured: dict) -> None:
    with pytest.raises(NotFoundError):
        client.functions.execute(
            function_name=fx["get_item"], function_arguments=item_arguments(), linked_account_owner_id=owner()
        )


# ---------------------------------------------------------------- meta functions


def test_meta_function_schemas_are_local() -> None:
    schema = ACISearchFunctions.to_json_schema(FunctionDefinitionFormat.OPENAI)

    assert schema["function"]["name"] == "ACI_SEARCH_FUNCTIONS"
    assert ACIExecuteFunction.to_json_schema(FunctionDefinitionFormat.ANTHROPIC)["name"] == "ACI_EXECUTE_FUNCTION"


def test_handle_function_call_search_gives_tool_schemas(client: ACI, fx: dict, configured: dict) -> None:
    found = client.handle_function_call(
        "ACI_SEARCH_FUNCTIONS",
        {"intent": "fetch one inventory item by id", "limit": 5},
        linked_account_owner_id=owner(),
        allowed_only=True,
        format=FunctionDefinitionFormat.OPENAI,
    )

    assert found, "the search found nothing"
    # What the SDK's agents hand to the model: tool schemas with their parameters.
    assert all(result["type"] == "function" and "parameters" in result["function"] for result in found)
    names = [result["function"]["name"] for result in found]
    assert fx["get_item"] in names
    assert fx["unconfigured_function"] not in names


def test_handle_function_call_execute_meta_function(client: ACI, fx: dict, api_owner: str) -> None:
    result = client.handle_function_call(
        "ACI_EXECUTE_FUNCTION",
        {"function_name": fx["get_item"], "function_arguments": item_arguments("7", "meta")},
        linked_account_owner_id=api_owner,
    )

    assert result["success"] is True, result
    assert result["data"]["path"] == "/items/7"
    assert result["data"]["query"] == {"q": "meta"}


def test_handle_function_call_direct_function(client: ACI, fx: dict, api_owner: str) -> None:
    result = client.handle_function_call(fx["get_item"], item_arguments("9", "direct"), linked_account_owner_id=api_owner)

    assert result["success"] is True, result
    assert result["data"]["path"] == "/items/9"


# ---------------------------------------------------------------- app configurations


def test_app_configurations_create_list_get_delete(client: ACI, other_client: ACI, fx: dict) -> None:
    created = client.app_configurations.create(
        app_name=fx["scratch_app"], security_scheme=SecurityScheme.NO_AUTH
    )
    listed = client.app_configurations.list(app_names=[fx["scratch_app"]])
    fetched = client.app_configurations.get(app_name=fx["scratch_app"])

    assert isinstance(created, AppConfiguration)
    assert created.app_name == fx["scratch_app"]
    assert created.security_scheme == SecurityScheme.NO_AUTH
    assert [c.id for c in listed] == [created.id]
    assert fetched.id == created.id
    with pytest.raises(NotFoundError):
        other_client.app_configurations.get(app_name=fx["scratch_app"])

    # The SDK sends Content-Type: application/json with its body-less DELETE.
    client.app_configurations.delete(app_name=fx["scratch_app"])

    with pytest.raises(NotFoundError):
        client.app_configurations.get(app_name=fx["scratch_app"])
    with pytest.raises(NotFoundError):
        client.app_configurations.delete(app_name=fx["scratch_app"])


def test_app_configurations_list_pages(client: ACI, configured: dict) -> None:
    first = client.app_configurations.list(limit=1, offset=0)
    second = client.app_configurations.list(limit=1, offset=1)

    assert len(first) == 1 and len(second) == 1
    assert first[0].app_name < second[0].app_name


# ---------------------------------------------------------------- linked accounts


def test_linked_accounts_link_no_auth_and_api_key(client: ACI, fx: dict, configured: dict) -> None:
    who = owner()
    no_auth = client.linked_accounts.link(
        app_name=fx["noauth_app"], linked_account_owner_id=who, security_scheme=SecurityScheme.NO_AUTH
    )
    api_key = client.linked_accounts.link(
        app_name=fx["api_app"], linked_account_owner_id=who, security_scheme=SecurityScheme.API_KEY, api_key="k-123"
    )

    assert isinstance(no_auth, LinkedAccount) and isinstance(api_key, LinkedAccount)
    assert no_auth.security_scheme == SecurityScheme.NO_AUTH
    assert api_key.security_scheme == SecurityScheme.API_KEY
    mine = client.linked_accounts.list(linked_account_owner_id=who)
    assert sorted(a.app_name for a in mine) == sorted([fx["noauth_app"], fx["api_app"]])
    assert [a.id for a in client.linked_accounts.list(app_name=fx["api_app"], linked_account_owner_id=who)] == [
        api_key.id
    ]


def test_linked_accounts_oauth2_start_returns_the_authorization_url(client: ACI, fx: dict, configured: dict) -> None:
    # The SDK's default after-link redirect (https://platform.aci.dev) is allowed by the test service's
    # OAUTH2_REDIRECT_ALLOWED_ORIGINS.
    url = client.linked_accounts.link(
        app_name=fx["oauth_app"], linked_account_owner_id=owner(), security_scheme=SecurityScheme.OAUTH2
    )

    assert isinstance(url, str)
    assert url.startswith(fx["oauth_authorize_url"] + "?")
    assert "state=" in url and "code_challenge=" in url
    assert fx["oauth_client_secret"] not in url


def test_linked_accounts_get_enable_disable_delete(client: ACI, fx: dict, configured: dict) -> None:
    who = owner()
    account = client.linked_accounts.link(
        app_name=fx["noauth_app"], linked_account_owner_id=who, security_scheme=SecurityScheme.NO_AUTH
    )

    fetched = client.linked_accounts.get(linked_account_id=account.id)
    disabled = client.linked_accounts.disable(linked_account_id=account.id)
    enabled = client.linked_accounts.enable(linked_account_id=account.id)

    assert isinstance(fetched, LinkedAccountWithCredentials)
    assert fetched.id == account.id
    # Patchbay never answers credentials (a documented difference from ACI).
    assert fetched.security_credentials is None
    assert disabled.enabled is False
    assert enabled.enabled is True

    # The SDK sends Content-Type: application/json with its body-less DELETE.
    client.linked_accounts.delete(linked_account_id=account.id)

    with pytest.raises(NotFoundError):
        client.linked_accounts.get(linked_account_id=account.id)
    with pytest.raises(NotFoundError):
        client.linked_accounts.delete(linked_account_id=account.id)


# ---------------------------------------------------------------- errors


def test_wrong_api_key_raises_authentication_error(fx: dict) -> None:
    stranger = ACI(api_key="pb_not_a_real_key", base_url=f"{fx['url']}/v1")

    with pytest.raises(AuthenticationError):
        stranger.apps.search(intent="anything")


def test_unknown_linked_account_raises_not_found(client: ACI) -> None:
    with pytest.raises(NotFoundError):
        client.linked_accounts.get(linked_account_id=uuid.uuid4())


def test_linking_with_the_wrong_scheme_raises_validation_error(client: ACI, fx: dict, configured: dict) -> None:
    # The no_auth app is configured with no_auth: an API-key link is a 400.
    with pytest.raises(ValidationError):
        client.linked_accounts.link(
            app_name=fx["noauth_app"],
            linked_account_owner_id=owner(),
            security_scheme=SecurityScheme.API_KEY,
            api_key="k",
        )


def test_disabled_account_raises_permission_error(client: ACI, fx: dict, configured: dict) -> None:
    who = owner()
    account = client.linked_accounts.link(
        app_name=fx["api_app"], linked_account_owner_id=who, security_scheme=SecurityScheme.API_KEY, api_key="k"
    )
    client.linked_accounts.disable(linked_account_id=account.id)

    with pytest.raises(PermissionError):
        client.functions.execute(
            function_name=fx["get_item"], function_arguments=item_arguments(), linked_account_owner_id=who
        )
