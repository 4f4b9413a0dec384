"""Lambda code for the router, the sweep and the answer API, bundled on the host without Docker.

An asset holds the pinned dependencies installed for the Lambda platform, the runtime package `agent_wait`
and the user's graph source; each function's asset leaves out what only the others import (the router and the
sweep share one, the answer API has its own), copied from one install. Each step has its module:

- `requirements`: which requirements are installed (given, found beside the graph, or the runtime's pins);
- `install`: `uv pip install` (or pip) for the Lambda platform and Python 3.13;
- `prune`: debug sections, tests, stubs, C sources and unused botocore models dropped;
- `lazy_init`: lazy package inits and Python 3.13 bytecode, for faster cold starts;
- `slim`: what each function's asset leaves out (`left_out`), and the copy slimmed of it (`slim_bundle`);
- `bundle`: `LambdaBundle`, which plans the asset, computes its hash and builds it in those steps.

Example:
    bundle = LambdaBundle.for_architecture(lambda_.Architecture.ARM_64, graph_source=["examples"])
    router_code = bundle.for_function("router").code()  # the router's and the sweep's asset
    api_code = bundle.for_function("api").code()  # the answer API's
"""

from agent_wait_cdk.bundling.bundle import BUNDLE_CONTEXT, MAX_BUNDLE_BYTES, LambdaBundle, find_runtime_source
from agent_wait_cdk.bundling.errors import BundleError
from agent_wait_cdk.bundling.install import LAMBDA_PYTHON_VERSION
from agent_wait_cdk.bundling.lazy_init import LAZY_PACKAGES, compile_bytecode, find_lambda_python, lazy_package_init
from agent_wait_cdk.bundling.prune import PRUNED, RUNTIME_AWS_SERVICES, Pruned, prune_bundle
from agent_wait_cdk.bundling.requirements import (
    DEPENDENCY_FILES,
    REQUIREMENTS_FILE,
    UV_EXPORT,
    Dependencies,
    find_dependencies,
)
from agent_wait_cdk.bundling.slim import FUNCTIONS, NEEDED_BY, RUNTIME_PARTS, left_out, slim_bundle

__all__ = (
    "BUNDLE_CONTEXT",
    "DEPENDENCY_FILES",
    "FUNCTIONS",
    "LAMBDA_PYTHON_VERSION",
    "LAZY_PACKAGES",
    "MAX_BUNDLE_BYTES",
    "NEEDED_BY",
    "PRUNED",
    "REQUIREMENTS_FILE",
    "RUNTIME_AWS_SERVICES",
    "RUNTIME_PARTS",
    "UV_EXPORT",
    "BundleError",
    "Dependencies",
    "LambdaBundle",
    "Pruned",
    "compile_bytecode",
    "find_dependencies",
    "find_lambda_python",
    "find_runtime_source",
    "lazy_package_init",
    "left_out",
    "prune_bundle",
    "slim_bundle",
)
