"""The laptop emulator (extra `local`): the deployed stack's handlers over an embedded moto server.

`EmulatedStack` deploys the synthesized template into moto on 127.0.0.1 and drives the same handlers the stack
deploys; `LocalApi` serves the answer API and plays API Gateway's JWT authorizer; `LocalIssuer` signs the dev
sign-in's tokens. Only the console script (`agent-wait dev`, `agent-wait demo`) imports this package.
"""
