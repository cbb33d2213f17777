import { backLink, type Brand, escapeHtml, html, type PageResponse } from '../projects/end-user-page.js';

export interface ConsentView {
  action: string;
  csrfToken: string;
  /** The developer's app (the project's branding). */
  brand: Brand;
  clientName: string;
  /** The client's own address when it registered one, shown so the user can tell who asks. */
  clientUri: string | null;
  /** Where the browser returns after the decision (the client's redirect URI). */
  redirectOrigin: string;
  ownerId: string;
  /** The signed-in user's name at the identity provider, when it gave one. */
  ownerName: string | null;
  apps: string[];
}

/** The consent page: which client asks, for which apps, as which user, with what permissions. */
export function consentPage(view: ConsentView): PageResponse {
  const project = escapeHtml(view.brand.name);
  const apps = view.apps.length
    ? `<ul>${view.apps.map((app) => `<li>${escapeHtml(app)}</li>`).join('')}</ul>`
    : `<p>No apps are set up yet; the apps ${project} sets up later will be included.</p>`;
  const client = view.clientUri
    ? `${escapeHtml(view.clientName)} (<span class="uri">${escapeHtml(view.clientUri)}</span>)`
    : escapeHtml(view.clientName);
  // The name is the user's own; the id beside it is what the sign-in proved, so that a shared browser shows whose.
  const user = view.ownerName
    ? `<strong>${escapeHtml(view.ownerName)}</strong> (${escapeHtml(view.ownerId)})`
    : `<strong>${escapeHtml(view.ownerId)}</strong>`;
  const body = `<h1>Allow ${escapeHtml(view.clientName)} to use ${project}?</h1>
<p class="request"><strong>${client}</strong> asks to act as ${user} with the apps of <strong>${project}</strong>.</p>
<h2>It will be able to</h2>
<ul>
<li>search the functions of these apps and read their descriptions;</li>
<li>run those functions with the accounts you linked, as ${escapeHtml(view.ownerName ?? view.ownerId)};</li>
<li>ask you to link an account when one is missing.</li>
</ul>
<h2>Apps</h2>
${apps}
<p class="note">It never sees your passwords or tokens. Access lasts 30 days at most, and ${project} can withdraw it at any time.</p>
<form method="post" action="${escapeHtml(view.action)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(view.csrfToken)}">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>
<p class="note">You will go back to ${escapeHtml(view.redirectOrigin)}.</p>`;
  return html(200, `Allow ${view.clientName}`, body, [view.redirectOrigin], view.brand);
}

/** A page that ends the sign-in; with the project's branding it leads back to the developer's app. */
export function errorPage(status: number, title: string, message: string, brand?: Brand): PageResponse {
  return html(
    status,
    title,
    `<h1>${escapeHtml(title)}</h1>
<p class="error" role="alert">${escapeHtml(message)}</p>
<p class="note">Go back to the app you came from and try again.</p>
${backLink(brand)}`,
    [],
    brand,
  );
}
