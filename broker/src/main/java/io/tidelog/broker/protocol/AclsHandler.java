package io.tidelog.broker.protocol;

import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.security.Authorization;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.message.CreateAclsRequestData.AclCreation;
import org.apache.kafka.common.message.CreateAclsResponseData;
import org.apache.kafka.common.message.CreateAclsResponseData.AclCreationResult;
import org.apache.kafka.common.message.DeleteAclsResponseData;
import org.apache.kafka.common.message.DeleteAclsResponseData.DeleteAclsFilterResult;
import org.apache.kafka.common.message.DescribeAclsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.CreateAclsRequest;
import org.apache.kafka.common.requests.CreateAclsResponse;
import org.apache.kafka.common.requests.DeleteAclsRequest;
import org.apache.kafka.common.requests.DeleteAclsResponse;
import org.apache.kafka.common.requests.DescribeAclsRequest;
import org.apache.kafka.common.requests.DescribeAclsResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.utils.SecurityUtils;
import org.apache.kafka.metadata.authorizer.StandardAcl;

/**
 * CreateAcls, DescribeAcls and DeleteAcls, as {@code kafka-acls} and Admin use them: ACLs are
 * validated as Kafka's controller validates them, stored in etcd, and applied by every broker's
 * authorizer from its watch; once a call returns, this broker applies them. Creating and deleting
 * need ALTER on the cluster, describing DESCRIBE; without an authorizer each answers
 * SECURITY_DISABLED, as Kafka does. A deletion matches at most {@link #DELETE_MAX_ACLS}, Kafka's
 * bound. Writes run on the metadata executor.
 */
public final class AclsHandler {
  static final int DELETE_MAX_ACLS = 10_000;
  private static final String NO_AUTHORIZER = "No Authorizer is configured.";
  private final MetadataStore metadata;
  private final Authorization authorization;
  private final Executor metadataExecutor;

  public AclsHandler(
      MetadataStore metadata, Authorization authorization, Executor metadataExecutor) {
    this.metadata = metadata;
    this.authorization = authorization;
    this.metadataExecutor = metadataExecutor;
  }

  CompletableFuture<CreateAclsResponse> create(RequestContext context, AbstractRequest request) {
    List<AclCreation> creations = ((CreateAclsRequest) request).aclCreations();
    ApiError refused = refusal(context);
    if (refused != null) {
      List<AclCreationResult> results = new ArrayList<>();
      creations.forEach(
          c ->
              results.add(
                  new AclCreationResult()
                      .setErrorCode(refused.error().code())
                      .setErrorMessage(refused.message())));
      return CompletableFuture.completedFuture(
          new CreateAclsResponse(new CreateAclsResponseData().setResults(results)));
    }
    return CompletableFuture.supplyAsync(
        () -> {
          AclCreationResult[] results = new AclCreationResult[creations.size()];
          Map<StandardAcl, List<Integer>> toCreate = new LinkedHashMap<>();
          Set<StandardAcl> existing = new HashSet<>(metadata.image().acls().values());
          for (int i = 0; i < creations.size(); i++) {
            AclBinding binding = CreateAclsRequest.aclBinding(creations.get(i));
            String invalid = invalidity(binding);
            if (invalid != null) {
              results[i] =
                  new AclCreationResult()
                      .setErrorCode(Errors.INVALID_REQUEST.code())
                      .setErrorMessage(invalid);
              continue;
            }
            StandardAcl acl = StandardAcl.fromAclBinding(binding);
            results[i] = new AclCreationResult().setErrorCode(Errors.NONE.code());
            if (!existing.contains(acl)) { // creating one that exists succeeds and adds nothing
              toCreate.computeIfAbsent(acl, a -> new ArrayList<>()).add(i);
            }
          }
          metadata.createAcls(List.copyOf(toCreate.keySet()));
          return new CreateAclsResponse(new CreateAclsResponseData().setResults(List.of(results)));
        },
        metadataExecutor);
  }

  /**
   * Why Kafka would refuse to store {@code binding} (its broker's and its controller's checks), or
   * null.
   */
  private static String invalidity(AclBinding binding) {
    ResourceType type = binding.pattern().resourceType();
    String name = binding.pattern().name();
    if (type == ResourceType.CLUSTER && !Authorization.CLUSTER_NAME.equals(name)) {
      return "The only valid name for the CLUSTER resource is " + Authorization.CLUSTER_NAME;
    }
    if (name.isEmpty()) {
      return "Invalid empty resource name";
    }
    if (type == ResourceType.ANY || type == ResourceType.UNKNOWN) {
      return "Invalid resourceType " + type;
    }
    PatternType pattern = binding.pattern().patternType();
    if (pattern != PatternType.LITERAL && pattern != PatternType.PREFIXED) {
      return "Invalid patternType " + pattern;
    }
    AclOperation operation = binding.entry().operation();
    if (operation == AclOperation.ANY || operation == AclOperation.UNKNOWN) {
      return "Invalid operation " + operation;
    }
    AclPermissionType permission = binding.entry().permissionType();
    if (permission != AclPermissionType.ALLOW && permission != AclPermissionType.DENY) {
      return "Invalid permissionType " + permission;
    }
    String principal = binding.entry().principal();
    if (principal.indexOf(':') == -1) {
      return "Could not parse principal from `"
          + principal
          + "` (no colon is present separating the principal type from the principal name)";
    }
    try {
      KafkaPrincipal parsed = SecurityUtils.parseKafkaPrincipal(principal);
      if (parsed.getName().isEmpty() && !principal.endsWith(":")) {
        return "Could not parse principal from `" + principal + "`";
      }
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
    return null;
  }

  CompletableFuture<DescribeAclsResponse> describe(
      RequestContext context, AbstractRequest request) {
    DescribeAclsRequest describe = (DescribeAclsRequest) request;
    DescribeAclsResponseData data = new DescribeAclsResponseData();
    if (!authorization.enabled()) {
      data.setErrorCode(Errors.SECURITY_DISABLED.code()).setErrorMessage(NO_AUTHORIZER);
    } else if (!authorization.allowedOnCluster(context, AclOperation.DESCRIBE)) {
      data.setErrorCode(Errors.CLUSTER_AUTHORIZATION_FAILED.code());
    } else {
      data.setErrorCode(Errors.NONE.code())
          .setResources(DescribeAclsResponse.aclsResources(authorization.acls(describe.filter())));
    }
    return CompletableFuture.completedFuture(
        new DescribeAclsResponse(data, context.header.apiVersion()));
  }

  CompletableFuture<DeleteAclsResponse> delete(RequestContext context, AbstractRequest request) {
    List<AclBindingFilter> filters = ((DeleteAclsRequest) request).filters();
    short version = context.header.apiVersion();
    ApiError refused = refusal(context);
    if (refused != null) {
      List<DeleteAclsFilterResult> results = new ArrayList<>();
      filters.forEach(
          f ->
              results.add(
                  new DeleteAclsFilterResult()
                      .setErrorCode(refused.error().code())
                      .setErrorMessage(refused.message())));
      return CompletableFuture.completedFuture(
          new DeleteAclsResponse(new DeleteAclsResponseData().setFilterResults(results), version));
    }
    return CompletableFuture.supplyAsync(
        () -> {
          List<DeleteAclsFilterResult> results = new ArrayList<>();
          List<Uuid> toDelete = new ArrayList<>();
          Set<Uuid> counted = new HashSet<>();
          Map<Uuid, StandardAcl> acls = metadata.image().acls();
          for (AclBindingFilter filter : filters) {
            DeleteAclsFilterResult result = new DeleteAclsFilterResult();
            String invalid = filterInvalidity(filter);
            if (invalid != null) {
              results.add(
                  result.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage(invalid));
              continue;
            }
            List<DeleteAclsResponseData.DeleteAclsMatchingAcl> matching = new ArrayList<>();
            acls.forEach(
                (id, acl) -> {
                  AclBinding binding = acl.toBinding();
                  if (filter.matches(binding)) {
                    matching.add(DeleteAclsResponse.matchingAcl(binding, ApiError.NONE));
                    if (counted.add(id)) {
                      toDelete.add(id);
                    }
                  }
                });
            results.add(result.setErrorCode(Errors.NONE.code()).setMatchingAcls(matching));
          }
          if (toDelete.size() > DELETE_MAX_ACLS) {
            ApiError tooMany =
                new ApiError(
                    Errors.INVALID_REQUEST,
                    "Cannot remove more than "
                        + DELETE_MAX_ACLS
                        + " acls in a single delete operation.");
            results.replaceAll(
                r ->
                    new DeleteAclsFilterResult()
                        .setErrorCode(tooMany.error().code())
                        .setErrorMessage(tooMany.message()));
          } else {
            metadata.deleteAcls(toDelete);
          }
          return new DeleteAclsResponse(
              new DeleteAclsResponseData().setFilterResults(results), version);
        },
        metadataExecutor);
  }

  private static String filterInvalidity(AclBindingFilter filter) {
    ResourcePatternFilter pattern = filter.patternFilter();
    AccessControlEntryFilter entry = filter.entryFilter();
    if (pattern.isUnknown()) {
      return "Unknown patternFilter.";
    }
    if (entry.isUnknown()) {
      return "Unknown entryFilter.";
    }
    return null;
  }

  /** Why the request may not alter ACLs, or null. */
  private ApiError refusal(RequestContext context) {
    if (!authorization.enabled()) {
      return new ApiError(Errors.SECURITY_DISABLED, NO_AUTHORIZER);
    }
    if (!authorization.allowedOnCluster(context, AclOperation.ALTER)) {
      return new ApiError(Errors.CLUSTER_AUTHORIZATION_FAILED, null);
    }
    return null;
  }
}
