"""The refund agent: a graph that asks finance before a large refund, its CDK stack, and its narrated demo."""
