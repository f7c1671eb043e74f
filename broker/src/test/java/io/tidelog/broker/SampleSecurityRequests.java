package io.tidelog.broker;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData.ScramCredentialUpsertion;
import org.apache.kafka.common.message.CreateAclsRequestData;
import org.apache.kafka.common.message.DeleteAclsRequestData;
import org.apache.kafka.common.message.DescribeUserScramCredentialsRequestData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AlterClientQuotasRequest;
import org.apache.kafka.common.requests.AlterUserScramCredentialsRequest;
import org.apache.kafka.common.requests.CreateAclsRequest;
import org.apache.kafka.common.requests.DeleteAclsRequest;
import org.apache.kafka.common.requests.DescribeAclsRequest;
import org.apache.kafka.common.requests.DescribeClientQuotasRequest;
import org.apache.kafka.common.requests.DescribeUserScramCredentialsRequest;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * A well-formed request of each security API, for tests that send every advertised version to a
 * broker with a PLAINTEXT listener and no authorizer, and the errors it answers there.
 */
final class SampleSecurityRequests {
  private SampleSecurityRequests() {}

  static AbstractRequest of(ApiKeys api, short v, String topic) {
    AclBinding acl =
        new AclBinding(
            new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL),
            new AccessControlEntry("User:sample", "*", AclOperation.READ, AclPermissionType.ALLOW));
    return switch (api) {
      case SASL_HANDSHAKE ->
          new SaslHandshakeRequest.Builder(new SaslHandshakeRequestData().setMechanism("PLAIN"))
              .build(v);
      case SASL_AUTHENTICATE ->
          new SaslAuthenticateRequest.Builder(
                  new SaslAuthenticateRequestData().setAuthBytes(new byte[0]))
              .build(v);
      case DESCRIBE_USER_SCRAM_CREDENTIALS ->
          new DescribeUserScramCredentialsRequest.Builder(
                  new DescribeUserScramCredentialsRequestData())
              .build(v);
      case ALTER_USER_SCRAM_CREDENTIALS ->
          new AlterUserScramCredentialsRequest.Builder(
                  new AlterUserScramCredentialsRequestData()
                      .setUpsertions(
                          List.of(
                              new ScramCredentialUpsertion()
                                  .setName(topic + "-user")
                                  .setMechanism((byte) 2)
                                  .setIterations(4096)
                                  .setSalt(new byte[16])
                                  .setSaltedPassword(new byte[64]))))
              .build(v);
      case CREATE_ACLS ->
          new CreateAclsRequest.Builder(
                  new CreateAclsRequestData()
                      .setCreations(List.of(CreateAclsRequest.aclCreation(acl))))
              .build(v);
      case DESCRIBE_ACLS -> new DescribeAclsRequest.Builder(AclBindingFilter.ANY).build(v);
      case DELETE_ACLS ->
          new DeleteAclsRequest.Builder(
                  new DeleteAclsRequestData()
                      .setFilters(List.of(DeleteAclsRequest.deleteAclsFilter(acl.toFilter()))))
              .build(v);
      case DESCRIBE_CLIENT_QUOTAS ->
          new DescribeClientQuotasRequest.Builder(
                  ClientQuotaFilter.containsOnly(
                      List.of(ClientQuotaFilterComponent.ofEntityType(ClientQuotaEntity.USER))))
              .build(v);
      case ALTER_CLIENT_QUOTAS ->
          new AlterClientQuotasRequest.Builder(
                  List.of(
                      new ClientQuotaAlteration(
                          new ClientQuotaEntity(Map.of(ClientQuotaEntity.USER, topic + "-user")),
                          List.of(new ClientQuotaAlteration.Op("producer_byte_rate", 1e9)))),
                  false)
              .build(v);
      default -> throw new AssertionError("advertised but not covered by this test: " + api);
    };
  }

  /**
   * The errors these samples get from a PLAINTEXT listener without an authorizer: SASL requests
   * ILLEGAL_SASL_STATE, ACL requests SECURITY_DISABLED, as Kafka answers them.
   */
  static List<Errors> expectedErrors(ApiKeys api) {
    return switch (api) {
      case SASL_HANDSHAKE, SASL_AUTHENTICATE -> List.of(Errors.ILLEGAL_SASL_STATE);
      case CREATE_ACLS, DESCRIBE_ACLS, DELETE_ACLS -> List.of(Errors.SECURITY_DISABLED);
      default -> List.of(Errors.NONE);
    };
  }
}
