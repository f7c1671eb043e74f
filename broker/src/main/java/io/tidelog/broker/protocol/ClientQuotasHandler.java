package io.tidelog.broker.protocol;

import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.quota.ControllerMutationQuotaManager;
import io.tidelog.broker.security.Authorization;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AlterClientQuotasRequest;
import org.apache.kafka.common.requests.AlterClientQuotasResponse;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.DescribeClientQuotasRequest;
import org.apache.kafka.common.requests.DescribeClientQuotasResponse;
import org.apache.kafka.common.requests.RequestContext;

/**
 * AlterClientQuotas and DescribeClientQuotas, as {@code kafka-configs --entity-type users|clients}
 * and Admin use them: quotas of users, client ids, both, and their defaults, validated as Kafka's
 * controller validates them ({@code producer_byte_rate}, {@code consumer_byte_rate} integers;
 * {@code request_percentage}, {@code controller_mutation_rate} numbers; INVALID_REQUEST otherwise),
 * stored in etcd and applied by every broker from its watch. Altering needs ALTER_CONFIGS on the
 * cluster, describing DESCRIBE_CONFIGS (CLUSTER_AUTHORIZATION_FAILED).
 *
 * <p>Quotas of IP addresses ({@code connection_creation_rate}) and {@code request_percentage} are
 * refused: Tidelog does not enforce them yet, and a quota that is stored but not kept would
 * mislead.
 */
public final class ClientQuotasHandler {
  /** The byte rates a user or client id quota takes: whole numbers of bytes per second. */
  static final Set<String> KEYS = Set.of("producer_byte_rate", "consumer_byte_rate");

  /**
   * The other rates a user or client id quota takes, any number: partition mutations per second,
   * and the percent of a thread's time.
   */
  private static final Set<String> RATES =
      Set.of(ControllerMutationQuotaManager.QUOTA_KEY, "request_percentage");

  private final MetadataStore metadata;
  private final Executor metadataExecutor;
  private final Authorization authorization;

  public ClientQuotasHandler(
      MetadataStore metadata, Executor metadataExecutor, Authorization authorization) {
    this.metadata = metadata;
    this.metadataExecutor = metadataExecutor;
    this.authorization = authorization;
  }

  CompletableFuture<AlterClientQuotasResponse> alter(
      RequestContext context, AbstractRequest request) {
    AlterClientQuotasRequest alter = (AlterClientQuotasRequest) request;
    Map<ClientQuotaEntity, ApiError> results = new LinkedHashMap<>();
    if (!authorization.allowedOnCluster(context, AclOperation.ALTER_CONFIGS)) {
      alter
          .entries()
          .forEach(
              a ->
                  results.put(
                      new ClientQuotaEntity(a.entity().entries()),
                      new ApiError(Errors.CLUSTER_AUTHORIZATION_FAILED, null)));
      return CompletableFuture.completedFuture(
          AlterClientQuotasResponse.fromQuotaEntities(results, 0));
    }
    return CompletableFuture.supplyAsync(
        () -> {
          for (ClientQuotaAlteration alteration : alter.entries()) {
            ClientQuotaEntity entity = new ClientQuotaEntity(alteration.entity().entries());
            ApiError invalid = invalidity(entity, alteration);
            if (invalid != null) {
              results.put(entity, invalid);
              continue;
            }
            Map<String, Double> set = new HashMap<>();
            Set<String> remove = new HashSet<>();
            alteration
                .ops()
                .forEach(
                    op -> {
                      if (op.value() == null) {
                        remove.add(op.key());
                      } else {
                        set.put(op.key(), op.value());
                      }
                    });
            if (!alter.validateOnly()) {
              metadata.alterClientQuota(entity, set, remove);
            }
            results.put(entity, ApiError.NONE);
          }
          return AlterClientQuotasResponse.fromQuotaEntities(results, 0);
        },
        metadataExecutor);
  }

  /** Why Kafka's controller would refuse the alteration, or null. */
  private static ApiError invalidity(ClientQuotaEntity entity, ClientQuotaAlteration alteration) {
    Map<String, String> entries = entity.entries();
    if (entries.isEmpty()) {
      return new ApiError(Errors.INVALID_REQUEST, "Invalid empty client quota entity");
    }
    for (String type : entries.keySet()) {
      if (type.equals(ClientQuotaEntity.IP)) {
        return new ApiError(
            Errors.INVALID_REQUEST, "Quotas of IP addresses are not served by Tidelog");
      }
      if (!type.equals(ClientQuotaEntity.USER) && !type.equals(ClientQuotaEntity.CLIENT_ID)) {
        return new ApiError(Errors.INVALID_REQUEST, "Unhandled client quota entity type: " + type);
      }
    }
    for (ClientQuotaAlteration.Op op : alteration.ops()) {
      if (!KEYS.contains(op.key()) && !RATES.contains(op.key())) {
        return new ApiError(Errors.INVALID_REQUEST, "Invalid configuration key " + op.key());
      }
      Double value = op.value();
      if (KEYS.contains(op.key())
          && value != null
          && (Math.floor(value) != value || value > Long.MAX_VALUE)) {
        return new ApiError(
            Errors.INVALID_REQUEST,
            "Proposed value for " + op.key() + " must be a whole number, not " + value);
      }
    }
    return null;
  }

  CompletableFuture<DescribeClientQuotasResponse> describe(
      RequestContext context, AbstractRequest request) {
    ClientQuotaFilter filter = ((DescribeClientQuotasRequest) request).filter();
    if (!authorization.allowedOnCluster(context, AclOperation.DESCRIBE_CONFIGS)) {
      return CompletableFuture.completedFuture(
          (DescribeClientQuotasResponse)
              request.getErrorResponse(0, Errors.CLUSTER_AUTHORIZATION_FAILED.exception()));
    }
    Set<String> types = new HashSet<>();
    for (ClientQuotaFilterComponent component : filter.components()) {
      if (!types.add(component.entityType())) {
        return CompletableFuture.completedFuture(
            (DescribeClientQuotasResponse)
                request.getErrorResponse(
                    0,
                    Errors.INVALID_REQUEST.exception(
                        "Entity type "
                            + component.entityType()
                            + " cannot appear more than once in the filter.")));
      }
    }
    Map<ClientQuotaEntity, Map<String, Double>> matching = new LinkedHashMap<>();
    metadata
        .image()
        .quotas()
        .forEach(
            (entity, values) -> {
              if (matches(filter, entity)) {
                matching.put(entity, values);
              }
            });
    return CompletableFuture.completedFuture(
        DescribeClientQuotasResponse.fromQuotaEntities(matching, 0));
  }

  /** Kafka's matching: every component matches, and with {@code strict} nothing else is named. */
  private static boolean matches(ClientQuotaFilter filter, ClientQuotaEntity entity) {
    Map<String, String> entries = entity.entries();
    for (ClientQuotaFilterComponent component : filter.components()) {
      if (!entries.containsKey(component.entityType())) {
        return false;
      }
      String name = entries.get(component.entityType());
      if (component.match() == null) {
        if (name == null) { // SPECIFIED: any named entity, not the default
          return false;
        }
      } else if (component.match().isEmpty()) {
        if (name != null) { // DEFAULT: the default entity of the type
          return false;
        }
      } else if (!component.match().get().equals(name)) { // EXACT
        return false;
      }
    }
    return !filter.strict() || entries.size() == filter.components().size();
  }
}
